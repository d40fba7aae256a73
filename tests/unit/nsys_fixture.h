/*
 * nsys_fixture.h - the head of the small Nsight Systems export (3.2x
 * layout) the importer tests and the crafted-SQL fuzz harness both build:
 * the export's schema version, its strings, and the kernel table's columns
 * up to the last one every 3.2x export has (each user closes the column
 * list, some adding a column a newer export may carry).
 */
#ifndef CVC_TEST_NSYS_FIXTURE_H
#define CVC_TEST_NSYS_FIXTURE_H

#define TU_NSYS_HEAD_SQL                                                                         \
	"CREATE TABLE META_DATA_EXPORT(name TEXT, value TEXT);"                                  \
	"INSERT INTO META_DATA_EXPORT VALUES('EXPORT_SCHEMA_VERSION','3.28.1');"                 \
	"CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"                            \
	"INSERT INTO StringIds VALUES(1,'void gemm<128>(float*)'),(2,'gemm'),(3,'step'),"        \
	"(4,'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)');"       \
	"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, deviceId INT, contextId INT," \
	" greenContextId INT, streamId INT, correlationId INT, globalPid INT, demangledName INT,"  \
	" shortName INT, mangledName INT, registersPerThread INT, gridX INT, gridY INT, gridZ INT," \
	" blockX INT, blockY INT, blockZ INT, staticSharedMemory INT, dynamicSharedMemory INT"

#endif
