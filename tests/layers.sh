#!/bin/sh
# layers.sh - the house follows its data flow (docs/ARCHITECTURE.md, issue 15):
# every #include of a cvc header, in the code and in the public headers
# themselves, must point at the including room or a room below it.
#
#   db (shared words, the store)  <-  profiler (timings in)
#                                 <-  analysis (classifier, breakdowns)
#                                       <-  models (operator models, fits)
#                                 <-  projector  <-  reports  <-  cli
#
# profiler is a sibling of analysis and models: neither side includes the
# other.  models may read analysis (trace fits walk classified kernels).  A folder's
# private headers ("models/opmodel_int.h") may be included only from that
# folder.  Prints every backward include and fails when there is one, or
# when an entry of the list of known ones below is no longer found (the list
# only shrinks).
#
#   layers.sh SOURCE_DIR
set -u
src=${1:-.}
cd "$src" || exit 2

# Known backward includes still to remove, one "file header" per line.
known=''

room_of_header() {
	case $1 in
	cvc.h | cvc_base.h | cvc_db.h | cvc_out.h | cvc_csv.h | cvc_nccltab.h | cvc_vocab.h | cvc_calshape.h) echo db ;;
	cvc_import.h | cvc_profile.h) echo profiler ;;
	cvc_classify.h | cvc_analyze.h) echo analysis ;;
	cvc_model.h) echo models ;;
	cvc_project.h | cvc_calibrate.h) echo projector ;;
	cvc_report.h) echo reports ;;
	*) echo unknown ;;
	esac
}

# Rooms a room may include.
allowed() {
	case $1 in
	db) echo "db" ;;
	profiler) echo "db profiler" ;;
	analysis) echo "db analysis" ;;
	models) echo "db analysis models" ;;
	projector) echo "db analysis models projector" ;;
	reports) echo "db analysis models projector reports" ;;
	cli) echo "db profiler analysis models projector reports" ;;
	esac
}

bad=0 seen=''
check() { # file room header
	hroom=$(room_of_header "$3")
	if [ "$hroom" = unknown ]; then
		echo "layers: $1: includes cvc/$3, which no room owns (add it to tests/layers.sh)"
		bad=1
		return
	fi
	case " $(allowed "$2") " in
	*" $hroom "*) return ;;
	esac
	if printf '%s\n' "$known" | grep -qx "$1 $3"; then
		seen="$seen|$1 $3"
		return
	fi
	echo "layers: $1 ($2) includes cvc/$3 ($hroom): a backward include"
	bad=1
}

for room in db profiler analysis models projector reports cli; do
	for f in $(find "$room" -name '*.c' -o -name '*.h' | sort); do
		for h in $(sed -n 's|^#include "cvc/\([a-z_0-9]*\.h\)".*|\1|p' "$f"); do
			check "$f" "$room" "$h"
		done
		for p in $(sed -n 's|^#include "\([a-z_]*\)/[a-z_0-9]*\.h".*|\1|p' "$f"); do
			[ "$p" = cvc ] && continue
			[ "$p" = "$room" ] || { echo "layers: $f includes a private header of $p/"; bad=1; }
		done
	done
done
for f in include/cvc/*.h; do
	h=$(basename "$f")
	room=$(room_of_header "$h")
	for inc in $(sed -n 's|^#include "\([a-z_0-9]*\.h\)".*|\1|p' "$f"); do
		check "$f" "$room" "$inc"
	done
done
printf '%s\n' "$known" | while IFS= read -r k; do
	[ -n "$k" ] || continue
	case "$seen|" in
	*"|$k|"*) ;;
	*) echo "layers: '$k' is gone: remove it from the known list in tests/layers.sh"; exit 1 ;;
	esac
done || bad=1
[ $bad = 0 ] && echo "layers: every include points at its own room or one below"
exit $bad
