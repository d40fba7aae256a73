/* dtype.c - see cvc_dtype_size() in cvc_db.h. */
#include <ctype.h>
#include <string.h>

#include "cvc/cvc_db.h"

int cvc_dtype_size(const char *dtype)
{
	static const struct {
		const char *name;
		int size;
	} t[] = {
		{"float", 4}, {"float32", 4}, {"f32", 4}, {"fp32", 4}, {"int", 4},
		{"int32", 4}, {"i32", 4}, {"uint32", 4}, {"u32", 4}, {"double", 8},
		{"float64", 8}, {"f64", 8}, {"fp64", 8}, {"long", 8}, {"int64", 8},
		{"i64", 8}, {"uint64", 8}, {"u64", 8}, {"half", 2}, {"float16", 2},
		{"f16", 2}, {"fp16", 2}, {"bfloat16", 2}, {"bf16", 2}, {"short", 2},
		{"int16", 2}, {"uint16", 2}, {"char", 1}, {"byte", 1}, {"int8", 1},
		{"uint8", 1}, {"i8", 1}, {"u8", 1}, {"bool", 1}, {"complexhalf", 4},
		{"complex32", 4}, {"complexfloat", 8}, {"complex64", 8},
		{"complexdouble", 16}, {"complex128", 16},
		/* c10's quantized types */
		{"qint8", 1}, {"quint8", 1}, {"qint32", 4}, {"quint4x2", 1}, {"quint2x4", 1},
		/* C spellings in Kineto's "Input type" */
		{"longint", 8}, {"unsignedchar", 1}, {"signedchar", 1}, {"shortint", 2},
	};
	char k[32];
	size_t n = 0;

	/* "c10::Half" (Kineto's Input type) is "Half". */
	if (dtype && strncmp(dtype, "c10::", 5) == 0)
		dtype += 5;
	/* Lowercase letters and digits only: "BFloat16" -> "bfloat16". */
	for (const char *s = dtype; s && *s && n + 1 < sizeof k; s++)
		if (isalnum((unsigned char)*s))
			k[n++] = (char)tolower((unsigned char)*s);
	k[n] = '\0';
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (strcmp(k, t[i].name) == 0)
			return t[i].size;
	/* float8_e4m3fn, f8e5m2, fp8...: one byte whatever the layout. */
	if (strncmp(k, "float8", 6) == 0 || strncmp(k, "fp8", 3) == 0 ||
	    (k[0] == 'f' && k[1] == '8'))
		return 1;
	return 0;
}
