/*
 * vgpu.c - the hardware cell of a published table: which GPU, how many
 * share an NVLink domain, and the link rates the cell states.  People write
 * "H100-SXM-80GB (DGX H100-class cluster)", "NVIDIA Ampere (A100 implied
 * by the node type)", "GB200 (NVL72)", "H800-SXM (8/node, NVLink 400GB/s,
 * 8x400 Gb/s IB)", "A100-40GB (1600 Gbps RoCE node-node)".  The GPU is the
 * catalog name found anywhere in the cell, outside parentheses first; a
 * rate is given to the link its own clause names (NVLink / NVSwitch /
 * xGMI: inside the node; InfiniBand / RoCE / Ethernet / a NIC: the
 * network), in bytes for "GB/s" and bits for "Gb/s" / "Gbps"; a network
 * rate is per GPU or per node as the cell says ("per GPU", "node-node",
 * "8x400"), and where it does not, a rate one NIC can carry is per GPU
 * (8-GPU training servers have one NIC per GPU) and more than that is per
 * node, which the row says it assumed.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_model.h"
#include "vrow.h"

/*
 * The fastest single NIC port shipping when this was written: ConnectX-8
 * and Quantum-X800, 800 Gb/s (NVIDIA ConnectX-8 SuperNIC datasheet, 2024).
 * A rate no higher is what one NIC per GPU gives; a higher one is a node's
 * aggregate.
 */
#define NIC_MAX_GBITS 800.0

#define MAX_TOKENS 48

struct tok {
	char s[48];
	int paren; /* inside parentheses */
};

/* Splits text into words at spaces, parentheses, commas, slashes and
 * semicolons, marking those inside parentheses. */
static size_t tokens(const char *text, struct tok *t, size_t max)
{
	size_t k = 0;
	int depth = 0;
	const char *p = text;

	while (*p && k < max) {
		size_t n;

		if (*p == '(' || *p == '[')
			depth++;
		else if ((*p == ')' || *p == ']') && depth)
			depth--;
		n = strcspn(p, " \t()[],;/+");
		if (!n) {
			p++;
			continue;
		}
		snprintf(t[k].s, sizeof t[k].s, "%.*s", (int)(n < 47 ? n : 47), p);
		t[k].paren = depth > 0;
		k++;
		p += n;
	}
	return k;
}

/* A catalog entry for words w (a window of tokens joined by spaces): as
 * written, then without trailing "-80GB" / "-SXM5" style parts, so a
 * strict catalog lookup still finds "H100-SXM-80GB" as H100-SXM. */
static const cvc_hw_spec *lookup_words(const cvc_hw_catalog *cat, const char *w)
{
	char buf[160];
	const cvc_hw_spec *spec;

	snprintf(buf, sizeof buf, "%s", w);
	for (;;) {
		char *cut;

		if (strlen(buf) < 3)
			return NULL;
		if ((spec = cvc_hw_catalog_lookup(cat, buf)) != NULL)
			return spec;
		cut = strrchr(buf, '-');
		if (!cut)
			cut = strrchr(buf, ' ');
		if (!cut)
			return NULL;
		*cut = 0;
	}
}

/*
 * The catalog GPU the cell names: the longest window of up to three
 * words that is a catalog name or alias, outside parentheses before
 * inside them.
 */
static const cvc_hw_spec *find_gpu(const cvc_hw_catalog *cat, const struct tok *t, size_t n,
				   int *in_paren, char *matched, size_t mlen, size_t *at)
{
	/* a model number outside the parentheses that is no catalog GPU
	 * ("Z9000 (NVL72)") names a GPU cvc does not know: the words in
	 * parentheses describe it, they do not name another */
	int unknown_model = 0;

	for (size_t i = 0; i < n; i++)
		if (!t[i].paren && strpbrk(t[i].s, "0123456789") &&
		    strspn(t[i].s, "0123456789.") < strlen(t[i].s))
			unknown_model = 1;
	for (int paren = 0; paren <= 1 - unknown_model; paren++)
		for (size_t w = 3; w >= 1; w--)
			for (size_t i = 0; i + w <= n; i++) {
				char buf[160] = "";
				const cvc_hw_spec *spec;
				int ok = 1;

				for (size_t j = i; j < i + w; j++) {
					size_t len = strlen(buf);

					ok &= t[j].paren == paren;
					snprintf(buf + len, sizeof buf - len, "%s%.47s", j > i ? " " : "",
						 t[j].s);
				}
				if (!ok || !(spec = lookup_words(cat, buf)))
					continue;
				*in_paren = paren;
				*at = i;
				snprintf(matched, mlen, "%.*s", (int)mlen - 1, buf);
				return spec;
			}
	return NULL;
}

/* The NVLink domain a cell names: "NVL72", "NVL 36", "NVL36x2" (two racks
 * of 36 joined into one domain of 72), "72-GPU NVLink domain". */
static double domain_of(const char *t)
{
	const char *p;
	char *end;
	double n;

	for (p = t; (p = strstr(p, "nvl")) != NULL; p += 3) {
		const char *q = p + 3;

		if (p > t && isalpha((unsigned char)p[-1]))
			continue;
		while (*q == ' ' || *q == '-')
			q++;
		if (!isdigit((unsigned char)*q))
			continue;
		n = strtod(q, &end);
		if (*end == 'x' && isdigit((unsigned char)end[1]))
			n *= strtod(end + 1, &end);
		if (n >= 2 && n <= 1e6 && !isalpha((unsigned char)*end))
			return n;
	}
	if ((p = strstr(t, "gpu nvlink domain")) != NULL || (p = strstr(t, "gpu domain")) != NULL) {
		while (p > t && (p[-1] == '-' || p[-1] == ' '))
			p--;
		while (p > t && isdigit((unsigned char)p[-1]))
			p--;
		if (isdigit((unsigned char)*p))
			return strtod(p, NULL);
	}
	return 0;
}

/*
 * A rate unit at s: bytes when the 'B' is upper case (GB/s, GBps, TB/s),
 * bits when it is not (Gb/s, Gbps, Gbit, GbE, "400G"); "GB" with no "/s"
 * is a memory size, not a rate.  Returns the factor to GB/s (1e9 B/s), 0
 * when s is no rate unit; *used its length, *bits whether it counts bits.
 */
static double unit_of(const char *s, size_t *used, int *bits)
{
	static const struct {
		const char *u;
		double gbs;
		int bits;
	} units[] = {
		{"GB/s", 1, 0},     {"GBps", 1, 0},     {"GB/sec", 1, 0},   {"TB/s", 1000, 0},
		{"TBps", 1000, 0},  {"Gb/s", 0.125, 1}, {"Gbps", 0.125, 1}, {"Gbit", 0.125, 1},
		{"GbE", 0.125, 1},  {"gbps", 0.125, 1}, {"gb/s", 0.125, 1}, {"gbit", 0.125, 1},
		{"gbe", 0.125, 1},  {"Tb/s", 125, 1},   {"Tbps", 125, 1},   {"Gb", 0.125, 1},
		{"G", 0.125, 1},
	};

	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		size_t n = strlen(units[i].u);

		/* "Gb" and "G" only as a whole word ("400G IB", not "80GB") */
		if (strncmp(s, units[i].u, n) || (n <= 2 && isalpha((unsigned char)s[n])))
			continue;
		*used = n;
		*bits = units[i].bits;
		return units[i].gbs;
	}
	return 0;
}

/* Which link the clause around a rate names: 1 inside the node, 2 the
 * network, 0 neither. */
static int link_of(const char *clause)
{
	if (vtext_has(clause, "nvlink|nvswitch|xgmi|infinity fabric|nvlink5|nvlink4|nvl|mnnvl"))
		return 1;
	if (vtext_has(clause, "infiniband|ib|ndr|hdr|edr|xdr|roce|ethernet|efa|nic|nics|"
			      "connectx|connectx-7|connectx-8|cx7|cx-7|cx8|slingshot|spectrum|"
			      "spectrum-x|node-node|node-to-node|inter-node|internode|network|"
			      "interconnect|tcpx|tcpxo|gpudirect|across nodes|between nodes|rdma|"
			      "gbe|fabric"))
		return 2;
	return 0;
}

/* The clause around position at of lower-cased t: between the separators
 * before and after it. */
static void clause_of(const char *t, size_t at, char *out, size_t len)
{
	size_t b = at, e = at;

	while (b > 0 && !strchr(",;()[]", t[b - 1]))
		b--;
	while (t[e] && !strchr(",;()[]", t[e]))
		e++;
	snprintf(out, len, "%.*s", (int)(e - b), t + b);
}

/* One rate at p of cell text (lower copy t at the same offsets). */
static void read_rate(const char *text, const char *t, const char *p, double gpn,
		      struct vgpu *g)
{
	char *end, clause[200];
	double count = 1, v, gbs;
	size_t used;
	int bits, link;
	const char *u;

	v = strtod(p, &end);
	if ((*end == 'x' || *end == 'X') && isdigit((unsigned char)end[1])) {
		count = v;
		v = strtod(end + 1, &end);
	} else if (!strncmp(end, " x ", 3) && isdigit((unsigned char)end[3])) {
		count = v;
		v = strtod(end + 3, &end);
	}
	u = end;
	while (*u == ' ')
		u++;
	if (!(gbs = unit_of(u, &used, &bits)) || !(v > 0) || !isfinite(v))
		return;
	gbs *= v;
	clause_of(t, (size_t)(p - text), clause, sizeof clause);
	link = link_of(clause);
	if (!link)
		link = bits ? 2 : 0; /* NICs are rated in bits, NVLink in bytes */
	if (link == 1) {
		int uni = vtext_has(clause, "unidirectional|per direction|each direction|uni");

		g->nvlink_gbps = count * gbs / (uni ? 1 : 2);
		g->nvlink_assumed = !uni;
		snprintf(g->nvlink_text, sizeof g->nvlink_text, "%.*s", (int)(u + used - p), p);
		return;
	}
	if (link == 0) {
		snprintf(g->ignored, sizeof g->ignored, "%.*s", (int)(u + used - p), p);
		return;
	}
	snprintf(g->nic_text, sizeof g->nic_text, "%.*s", (int)(u + used - p), p);
	if (count > 1) {
		/* "8x400 Gb/s": that many NICs on a node of gpn GPUs */
		g->nic_gbps = count * gbs / gpn;
		g->nic_how = "per node: the count times the rate";
	} else if (vtext_has(clause, "per gpu|/gpu|per-gpu|each gpu|one per gpu|1 per gpu|per accelerator")) {
		g->nic_gbps = gbs;
		g->nic_how = "per GPU, as the cell says";
	} else if (vtext_has(clause, "per node|/node|node-node|node-to-node|per server|per host|"
				     "per tray|aggregate|total|per machine")) {
		g->nic_gbps = gbs / gpn;
		g->nic_how = "per node, as the cell says";
	} else if (gbs * 8 <= NIC_MAX_GBITS) {
		g->nic_gbps = gbs;
		g->nic_how = "per GPU: a rate one NIC carries, one NIC per GPU as 8-GPU training "
			     "servers are built";
		g->nic_assumed = 1;
	} else {
		g->nic_gbps = gbs / gpn;
		g->nic_how = "per node: more than one NIC carries (800 Gb/s)";
		g->nic_assumed = 1;
	}
}

/* "8/node", "8 GPUs per node", "4 per tray": the GPUs of a node. */
static double per_node_of(const char *t)
{
	for (const char *p = t; *p; p++) {
		char *end;
		double n;

		if (!isdigit((unsigned char)*p) || (p > t && (isalnum((unsigned char)p[-1]) ||
							    p[-1] == '.' || p[-1] == 'x')))
			continue;
		n = strtod(p, &end);
		while (*end == ' ')
			end++;
		if (!strncmp(end, "gpus", 4))
			end += 4;
		else if (!strncmp(end, "gpu", 3))
			end += 3;
		while (*end == ' ')
			end++;
		if ((!strncmp(end, "/node", 5) || !strncmp(end, "per node", 8) ||
		     !strncmp(end, "/server", 7) || !strncmp(end, "per server", 10)) &&
		    n >= 1 && n <= 1024 && n == floor(n))
			return n;
		p = end > p ? end - 1 : p;
	}
	return 0;
}

/* A GPU count token: "512", "512x", "512×"; 0 when c is none. */
static double count_of(const char *c)
{
	char *end;
	double v;

	if (!isdigit((unsigned char)*c))
		return 0;
	v = strtod(c, &end);
	if (*end == 'x' || *end == 'X')
		end++;
	else if (!strncmp(end, "\xC3\x97", 2))
		end += 2;
	return !*end && v >= 1 && v <= 1e7 && v == floor(v) ? v : 0;
}

/*
 * The first number in text standing on its own (not inside a word: "H100",
 * "v1.5") whose unit, the text after it, unit_ok accepts; 0 when none.
 */
static double first_number(const char *text, int (*unit_ok)(const char *unit, double v))
{
	for (const char *p = text; *p; p++) {
		char *end;
		double v;

		if (!isdigit((unsigned char)*p) || (p > text && (isalnum((unsigned char)p[-1]) ||
							       p[-1] == '.')))
			continue;
		v = strtod(p, &end);
		if (unit_ok(end, v))
			return v;
		p = end > p ? end - 1 : p;
	}
	return 0;
}

/* "96GB", "96 GB", "40GiB": a memory size, not a rate ("GB/s", "GBps"). */
static int mem_unit(const char *u, double v)
{
	while (*u == ' ')
		u++;
	return (!strncmp(u, "GB", 2) || !strncmp(u, "GiB", 3)) && strncmp(u, "GB/", 3) &&
	       strncmp(u, "GBps", 4) && !isalpha((unsigned char)u[u[1] == 'i' ? 3 : 2]) &&
	       v >= 1 && v <= 4096;
}

/* "500W", "500 W", "1000 W TDP": a power in watts, 50 to 5000. */
static int power_unit(const char *u, double v)
{
	if (*u == ' ')
		u++;
	return *u == 'W' && !isalnum((unsigned char)u[1]) && v >= 50 && v <= 5000;
}

/*
 * The catalog's entry for g->spec with the memory the cell states, when it
 * has one: "<name>-<N>GB", the name's own size part replaced (A100-SXM-80GB
 * with "40GB" is A100-SXM-40GB; H100-SXM with "96GB HBM2e" is
 * H100-SXM-96GB).  A part sold with more than one memory differs in
 * bandwidth, capacity and often power; the size is what cells say.
 */
static void memory_variant(const cvc_hw_catalog *cat, struct vgpu *g)
{
	char name[64], *cut;
	const cvc_hw_spec *v;

	if (!(g->mem_gb > 0) || fabs(g->mem_gb - g->spec->hbm_gb) < 1)
		return;
	snprintf(name, sizeof name, "%s", g->spec->name);
	cut = strrchr(name, '-');
	if (cut && isdigit((unsigned char)cut[1]) && strstr(cut, "GB"))
		*cut = 0;
	snprintf(name + strlen(name), sizeof name - strlen(name), "-%.0fGB", g->mem_gb);
	/* the exact name: the lookup's prefix rule would give the part back */
	if ((v = cvc_hw_catalog_find(cat, name, "gpu")) != NULL && v != g->spec) {
		snprintf(g->variant_of, sizeof g->variant_of, "%s", g->spec->name);
		g->spec = v;
	}
}

int vgpu_read(const cvc_hw_catalog *cat, const char *text, double gpn_default, struct vgpu *g)
{
	struct tok t[MAX_TOKENS];
	char low[512];
	size_t n, at = 0;
	double gpn;

	memset(g, 0, sizeof *g);
	n = tokens(text, t, MAX_TOKENS);
	g->spec = cat ? find_gpu(cat, t, n, &g->in_paren, g->matched, sizeof g->matched, &at)
		      : NULL;
	/* "512x H100", "512 x H100", "1024 H100 GPUs": the run's GPU count */
	if (g->spec && at > 0 && !t[at - 1].paren) {
		const char *c = t[at - 1].s;
		size_t k = at - 1;

		if (!strcmp(c, "x") || !strcmp(c, "X") || !strcmp(c, "\xC3\x97"))
			c = k > 0 && !t[k - 1].paren ? t[k - 1].s : "";
		g->count = count_of(c);
	}
	g->mem_gb = first_number(text, mem_unit);
	g->power_w = first_number(text, power_unit);
	if (g->spec)
		memory_variant(cat, g);
	vtext_lower(low, sizeof low, text);
	g->domain = domain_of(low);
	g->per_node = per_node_of(low);
	gpn = g->per_node > 0 ? g->per_node : gpn_default > 0 ? gpn_default : 8;
	for (const char *p = text; *p && (size_t)(p - text) < strlen(low); p++) {
		char *end;

		if (!isdigit((unsigned char)*p) || (p > text && (isalnum((unsigned char)p[-1]) ||
							       p[-1] == '.')))
			continue;
		read_rate(text, low, p, gpn, g);
		(void)strtod(p, &end);
		if ((*end == 'x' || *end == 'X') && isdigit((unsigned char)end[1]))
			(void)strtod(end + 1, &end);
		p = end > p ? end - 1 : p;
	}
	return g->spec ? 0 : -1;
}
