/*
 * nccl_profiler_v5.h - NCCL profiler plugin interface v5 (NCCL 2.28), the
 * part cvc uses.  The plugin headers do not ship with the CUDA toolkit or
 * NCCL's binary packages, so they are declared here from NCCL's source:
 * NVIDIA/nccl src/include/plugin/profiler/profiler_v5.h (v2.28) for the
 * structs, src/include/plugin/nccl_profiler.h for the event type bits.
 * Names are cvc's, layouts are NCCL's.
 */
#ifndef CVC_NCCL_PROFILER_V5_H
#define CVC_NCCL_PROFILER_V5_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef int cvc_nccl_result;  /* ncclResult_t; 0 = ncclSuccess */
typedef int cvc_nccl_state;   /* ncclProfilerEventState_v5_t */
typedef void (*cvc_nccl_logger)(void); /* ncclDebugLogger_t, unused */

enum {
	NCCL_PROFILE_GROUP_API = 1 << 8,
	NCCL_PROFILE_COLL_API = 1 << 9,
	NCCL_PROFILE_P2P_API = 1 << 10,
	NCCL_PROFILE_KERNEL_LAUNCH = 1 << 11
};

typedef struct {
	uint64_t type;
	void *parentObj;
	int rank;
	union {
		struct { bool graphCaptured; int groupDepth; } groupApi;
		struct {
			const char *func;
			size_t count;
			const char *datatype;
			int root;
			void *stream;
			bool graphCaptured;
		} collApi;
		struct {
			const char *func;
			size_t count;
			const char *datatype;
			void *stream;
			bool graphCaptured;
		} p2pApi;
		struct { void *stream; } kernelLaunch;
		struct {
			uint64_t seqNumber;
			const char *func;
			void const *sendBuff;
			void *recvBuff;
			size_t count;
			int root;
			const char *datatype;
			uint8_t nChannels;
			uint8_t nWarps;
			const char *algo;
			const char *proto;
			void *parentGroup;
		} coll;
		struct {
			const char *func;
			void *buff;
			const char *datatype;
			size_t count;
			int peer;
			uint8_t nChannels;
			void *parentGroup;
		} p2p;
		struct {
			pid_t pid;
			uint8_t channelId;
			int peer;
			int nSteps;
			int chunkSize;
			int isSend;
		} proxyOp;
		struct { int step; } proxyStep;
		struct { uint8_t channelId; uint64_t pTimer; } kernelCh;
		struct { int64_t id; void *data; } netPlugin;
	};
} cvc_nccl_descr_v5;

typedef struct {
	const char *name;
	cvc_nccl_result (*init)(void **context, uint64_t commId, int *eActivationMask,
				const char *commName, int nNodes, int nranks, int rank,
				cvc_nccl_logger logfn);
	cvc_nccl_result (*startEvent)(void *context, void **eHandle, cvc_nccl_descr_v5 *eDescr);
	cvc_nccl_result (*stopEvent)(void *eHandle);
	cvc_nccl_result (*recordEventState)(void *eHandle, cvc_nccl_state eState, void *eStateArgs);
	cvc_nccl_result (*finalize)(void *context);
} cvc_nccl_profiler_v5;

#endif
