/*
 * demangle.c - C++ kernel names, demangled as Kineto and Nsight Systems
 * store them.
 *
 * CUPTI reports a kernel's symbol as compiled ("_ZN2at6native18elementwise_
 * kernelILi128ELi2E..."); torch.profiler's trace and an Nsight Systems
 * export (its demangledName column) carry "void at::native::elementwise_
 * kernel<128, 2, ...>(...)".  Without this, the same kernel recorded by
 * `cvc profile` and by Kineto had two names (27 of 73 in a PyTorch step
 * on an H200, docs/GPU-VALIDATION.md), so a rule or a query written
 * against one recorder's names missed the other's.  The demangler is the
 * C++ runtime's own (the Itanium ABI's __cxa_demangle, which Kineto also
 * calls), so the text is the same byte for byte.
 */
#include <stdlib.h>
#include <string.h>

#include "profiler/demangle.h"

/* libstdc++ exports it with C linkage (cxxabi.h declares it extern "C"). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *n, int *status);

cvc_status prof_demangle_new(const char *name, size_t len, char **out)
{
	char *z, *d;
	int status = 0;

	*out = NULL;
	if (len < 3 || name[0] != '_' || name[1] != 'Z')
		return CVC_OK;
	if (!(z = malloc(len + 1)))
		return CVC_ERR_NOMEM;
	memcpy(z, name, len);
	z[len] = '\0';
	d = __cxa_demangle(z, NULL, NULL, &status);
	free(z);
	if (status == -1)
		return CVC_ERR_NOMEM;
	if (status != 0 || !d) {
		free(d);
		return CVC_OK; /* not a symbol after all (-2): keep the name */
	}
	*out = d;
	return CVC_OK;
}
