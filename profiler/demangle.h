/*
 * demangle.h - kernel names as the other recorders store them.
 */
#ifndef CVC_PROF_DEMANGLE_H
#define CVC_PROF_DEMANGLE_H

#include <stddef.h>

#include "cvc/cvc_base.h"

/*
 * The readable form of the C++ symbol name[0..len) (no NUL needed): *out is
 * a new NUL-terminated string the caller frees, or NULL when name is not an
 * Itanium-mangled symbol ("_Z...") or does not demangle (then the name is
 * kept as it is).  CVC_ERR_NOMEM when memory runs out.
 */
cvc_status prof_demangle_new(const char *name, size_t len, char **out);

#endif
