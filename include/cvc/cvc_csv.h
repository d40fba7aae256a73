/*
 * cvc_csv.h - writing CSV fields the same way in every table cvc prints
 * (analyze, classify, project, report): RFC 4180 quoting where needed.
 */
#ifndef CVC_CSV_H
#define CVC_CSV_H

#include <stdio.h>

#include "cvc.h"

/*
 * Writes s as one CSV field: as is when it needs no quoting, else in double
 * quotes with inner quotes doubled.  Quoted when it holds a comma, a quote,
 * CR or LF, or starts or ends with a space (which spreadsheets would trim).
 * NULL writes an empty field.
 */
CVC_API void cvc_csv_field(FILE *f, const char *s);

#endif
