/*
 * csvsplit.h - the comma splitter the models' data files share (hardware
 * catalog, measured tables).  Those files hold numbers and plain names, no
 * quoted fields, so splitting in place at commas is the whole grammar.
 */
#ifndef CVC_MODELS_CSVSPLIT_H
#define CVC_MODELS_CSVSPLIT_H

/*
 * Splits line in place at commas into f[0..maxf); returns the field count.
 * A line with more than maxf fields leaves the rest in f[maxf-1].
 */
int model_csv_split(char *line, char **f, int maxf);

#endif
