/*
 * report.js - renders the cvc report from the JSON island #cvc-data.
 * Compiled into the cvc binary and inlined into every page (no network).
 * Every string from the data goes into the page through textContent or
 * Chart.js canvas text, never as markup.  After rendering, a self-check
 * writes its verdict into #cvc-selfcheck (hidden): no errors were reported
 * and every chart canvas has drawn data pixels.  Tests read that verdict.
 */
(function () {
	'use strict';
	var D = JSON.parse(document.getElementById('cvc-data').textContent);
	var T = D.tables || {};
	/* Columns whose strings repeat come as indexes into the table's dict
	   (reports/island.c): expanded here, before anything reads a table. */
	Object.keys(T).forEach(function (n) {
		var t = T[n];
		if (!t.dict) return;
		Object.keys(t.dict).forEach(function (name) {
			var c = t.columns.indexOf(name), v = t.dict[name];
			if (c < 0) return;
			t.rows.forEach(function (r) { if (r[c] !== null) r[c] = v[r[c]]; });
		});
		delete t.dict;
	});
	var main = document.getElementById('main');
	var toc = document.getElementById('toc');
	var rendered = false;
	/* Red means communication and nothing else: no palette colour is COMM,
	   and a chart has at most one series in it (checked by selfCheck). */
	var COMM = '#d62728';
	var PALETTE = ['#1f77b4', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2',
		'#17becf', '#bcbd22', '#0b4f8a', '#b8860b', '#006d5b', '#7f7f7f'];
	/* Exposed communication by type: distinct from each other and from COMM. */
	var TYPES = ['tp', 'pp', 'dp', 'fsdp', 'ep', 'cp', 'xc'];
	var TYPE_COLOR = {tp: '#6a3d9a', pp: '#b15928', dp: '#ff7f00', fsdp: '#e7298a',
		ep: '#1b9e77', cp: '#a6761d', xc: '#666666'};
	var MIN_FONT_PX = 10;

	Chart.defaults.animation = false;
	Chart.defaults.responsive = true;
	Chart.defaults.maintainAspectRatio = false;
	Chart.defaults.font.size = 12;
	/* Interval whiskers: chart.data.whiskers = {lo: [], hi: []}, one per category. */
	Chart.register({id: 'cvcWhiskers', afterDatasetsDraw: function (chart) {
		var w = chart.data.whiskers;
		if (!w) return;
		var horiz = chart.options.indexAxis === 'y';
		var vs = horiz ? chart.scales.x : chart.scales.y, is = horiz ? chart.scales.y : chart.scales.x;
		var ctx = chart.ctx, cap = 4;
		ctx.save();
		ctx.strokeStyle = '#1d2433';
		ctx.lineWidth = 1.5;
		w.lo.forEach(function (lo, i) {
			var hi = w.hi[i];
			if (lo === null || hi === null || lo === undefined || hi === undefined) return;
			var c = is.getPixelForValue(i), a = vs.getPixelForValue(lo), b = vs.getPixelForValue(hi);
			ctx.beginPath();
			if (horiz) {
				ctx.moveTo(a, c); ctx.lineTo(b, c);
				ctx.moveTo(a, c - cap); ctx.lineTo(a, c + cap);
				ctx.moveTo(b, c - cap); ctx.lineTo(b, c + cap);
			} else {
				ctx.moveTo(c, a); ctx.lineTo(c, b);
				ctx.moveTo(c - cap, a); ctx.lineTo(c + cap, a);
				ctx.moveTo(c - cap, b); ctx.lineTo(c + cap, b);
			}
			ctx.stroke();
		});
		ctx.restore();
	}});

	function el(tag, cls, text) {
		var e = document.createElement(tag);
		if (cls) e.className = cls;
		if (text !== undefined && text !== null) e.textContent = String(text);
		return e;
	}
	function col(t, name) { return t ? t.columns.indexOf(name) : -1; }
	function column(t, name) {
		var c = col(t, name);
		return t.rows.map(function (r) { return c < 0 ? null : r[c]; });
	}
	function fmt(v) {
		if (v === null || v === undefined) return '';
		if (typeof v !== 'number') return String(v);
		if (Number.isInteger(v) && Math.abs(v) < 1e15) return String(v);
		var a = Math.abs(v);
		if (a !== 0 && (a < 1e-4 || a >= 1e9)) return v.toExponential(4);
		return String(Number(v.toPrecision(6)));
	}
	function uniq(a) {
		var seen = {}, out = [];
		a.forEach(function (x) { var k = String(x); if (!seen[k]) { seen[k] = 1; out.push(x); } });
		return out;
	}
	function section(id, title) {
		var s = el('section', 'sec');
		s.id = id;
		s.appendChild(el('h2', null, title));
		main.appendChild(s);
		var a = el('a', null, title);
		a.href = '#' + id;
		toc.appendChild(a);
		return s;
	}
	function sub(parent, title, note) {
		var d = el('div', 'block');
		d.appendChild(el('h3', null, title));
		if (note) d.appendChild(el('p', 'note', note));
		parent.appendChild(d);
		return d;
	}
	function chartBox(parent, id, height) {
		var box = el('div', 'chart');
		box.style.height = (height || 360) + 'px';
		var c = document.createElement('canvas');
		c.id = id;
		box.appendChild(c);
		parent.appendChild(box);
		return c;
	}
	function fileNote(parent, name) {
		parent.appendChild(el('p', 'files', 'data: ' + name + '.csv, ' + name + '.json'));
	}

	/* A plain table of a data table; sortable and filterable when asked. */
	function dataTable(parent, t, opts) {
		opts = opts || {};
		var wrap = el('div', 'tablewrap');
		var ctl = el('div', 'tablectl');
		var filter = null, info = el('span', 'note'), more = null;
		var order = t.rows.map(function (_, i) { return i; });
		var shown = order, sortCol = -1, sortDir = 1, limit = opts.page || 1e9;
		if (opts.interactive) {
			filter = document.createElement('input');
			filter.type = 'search';
			filter.placeholder = 'filter: words, or col>x col<x col=x col!=x';
			filter.size = 48;
			ctl.appendChild(filter);
			ctl.appendChild(info);
			more = el('button', null, 'show more');
			more.type = 'button';
			ctl.appendChild(more);
			wrap.appendChild(ctl);
		}
		var table = el('table', 'data');
		var thead = el('thead'), tbody = el('tbody'), hr = el('tr');
		t.columns.forEach(function (name, c) {
			var th = el('th', null, name);
			if (opts.interactive) {
				th.className = 'sortable';
				th.title = 'sort';
				th.addEventListener('click', function () {
					sortDir = sortCol === c ? -sortDir : 1;
					sortCol = c;
					apply();
				});
			}
			hr.appendChild(th);
		});
		thead.appendChild(hr);
		table.appendChild(thead);
		table.appendChild(tbody);
		wrap.appendChild(table);
		parent.appendChild(wrap);

		function cmp(a, b) {
			var x = t.rows[a][sortCol], y = t.rows[b][sortCol];
			if (x === y) return a - b;
			if (x === null) return 1;
			if (y === null) return -1;
			if (typeof x === 'number' && typeof y === 'number') return (x - y) * sortDir;
			return String(x).localeCompare(String(y)) * sortDir;
		}
		function parseFilter(s) {
			return s.trim().split(/\s+/).filter(Boolean).map(function (w) {
				var m = /^([A-Za-z0-9_.=]+?)(<=|>=|!=|=|<|>)(.+)$/.exec(w);
				if (m && col(t, m[1]) >= 0) return {c: col(t, m[1]), op: m[2], v: m[3]};
				return {word: w.toLowerCase()};
			});
		}
		function match(row, f) {
			if (f.word !== undefined) {
				return row.some(function (v) { return v !== null && String(v).toLowerCase().indexOf(f.word) >= 0; });
			}
			var x = row[f.c], n = Number(f.v);
			if (x === null) return false;
			var num = typeof x === 'number' && !isNaN(n);
			switch (f.op) {
			case '=': return num ? x === n : String(x) === f.v;
			case '!=': return num ? x !== n : String(x) !== f.v;
			case '<': return num && x < n;
			case '>': return num && x > n;
			case '<=': return num && x <= n;
			default: return num && x >= n;
			}
		}
		function apply() {
			var fs = filter ? parseFilter(filter.value) : [];
			shown = order.filter(function (i) { return fs.every(function (f) { return match(t.rows[i], f); }); });
			if (sortCol >= 0) shown.sort(cmp);
			draw();
		}
		function draw() {
			while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
			var n = Math.min(limit, shown.length);
			for (var k = 0; k < n; k++) {
				var row = t.rows[shown[k]], tr = el('tr');
				row.forEach(function (v, c) {
					var td = el('td', typeof v === 'number' ? 'num' : null, fmt(v));
					if ((typeof v === 'number' && fmt(v) !== String(v)) || (typeof v === 'string' && v.length > 80)) td.title = String(v);
					if (opts.cellStyle) opts.cellStyle(td, v, c);
					tr.appendChild(td);
				});
				tbody.appendChild(tr);
			}
			if (opts.interactive) {
				info.textContent = ' ' + shown.length + ' of ' + t.rows.length + ' rows' +
					(n < shown.length ? ', showing ' + n : '');
				more.style.display = n < shown.length ? '' : 'none';
			}
		}
		if (filter) filter.addEventListener('input', apply);
		if (more) more.addEventListener('click', function () { limit += opts.page; draw(); });
		draw();
		return table;
	}

	function stackedBar(canvas, labels, sets, yTitle, horizontal) {
		return new Chart(canvas, {
			type: 'bar',
			data: {labels: labels, datasets: sets.map(function (s) {
				return {label: s.label, data: s.data, backgroundColor: s.color, borderWidth: 0};
			})},
			options: {
				indexAxis: horizontal ? 'y' : 'x',
				plugins: {legend: {position: 'top'}},
				scales: {
					x: {stacked: true, title: {display: !!horizontal, text: yTitle}},
					y: {stacked: true, title: {display: !horizontal, text: yTitle}}
				}
			}
		});
	}

	/* A GPU-count picker over table t's gpus column; the largest count first shown. */
	function gpuPicker(parent, t, id) {
		var counts = uniq(column(t, 'gpus')).sort(function (a, b) { return a - b; });
		var pick = el('select');
		pick.id = id;
		counts.forEach(function (n) { var o = el('option', null, String(n)); o.value = String(n); pick.appendChild(o); });
		pick.value = String(counts[counts.length - 1]);
		var l = el('label', 'pick', 'GPUs: ');
		l.appendChild(pick);
		parent.appendChild(l);
		return pick;
	}
	function picker(parent, text, values, labels) {
		var pick = el('select');
		values.forEach(function (v, i) { var o = el('option', null, labels ? labels[i] : v); o.value = String(v); pick.appendChild(o); });
		var l = el('label', 'pick', text);
		l.appendChild(pick);
		parent.appendChild(l);
		return pick;
	}
	/* A share as text: 1 decimal under 10%, none above. */
	function pct(v) {
		if (v === null || v === undefined) return '';
		var p = 100 * v;
		return (Math.abs(p) < 10 ? p.toFixed(1) : p.toFixed(0)) + '%';
	}
	function pctIv(v, lo, hi) {
		if (lo === null || hi === null || lo === undefined || hi === undefined) return pct(v);
		return pct(v) + ' (' + pct(lo).replace('%', '') + '\u2013' + pct(hi) + ')';
	}
	/* Resizes a horizontal bar chart's box to n readable rows. */
	function fitRows(chart, n) {
		chart.canvas.parentNode.style.height = Math.max(180, 22 * n + 90) + 'px';
		chart.resize();
	}

	/*
	 * Draws a chart of the rows at the picked GPU count and returns how to
	 * redraw it when the pick changes; fill(a) sets the data for a.rows.
	 */
	function pickedChart(chart, t, pick, b, name, fill) {
		var draw = function () {
			var a = atCount(t, pick);
			chart.data.labels = a.labels;
			fill(a);
			fitRows(chart, a.rows.length);
			chart.update();
		};
		draw();
		fileNote(b, name);
		return draw;
	}

	/* ---- first screen: the answer ---- */
	function headlineSection() {
		var hl = T.headline;
		if (!hl || !hl.rows.length) return;
		var s = section('headline', 'Answer: communication per model, hardware and GPU count');
		var f = T.findings;
		if (f && f.rows.length) {
			var ul = el('ul', 'findings');
			ul.id = 'findings';
			f.rows.forEach(function (x) { ul.appendChild(el('li', null, x[col(f, 'finding')])); });
			s.appendChild(ul);
		}
		var b = sub(s, 'Best layout per model and hardware',
			'The valid layout with the most tokens/s per GPU; communication and exposed (not hidden under compute) shares of the step with their 90% intervals; the last columns compare with the next hardware generation at the same GPU count.');
		var pick = gpuPicker(b, hl, 'headline-gpus');
		var C = function (n) { return col(hl, n); };
		var heads = ['model', 'hardware', 'layout', 'tokens/s per GPU', 'comm share (90%)',
			'exposed share (90%)', 'most exposed', 'next gen.: \u0394 comm',
			'\u0394 exposed', 'tokens/s per GPU'];
		var tbl = el('table', 'data headline');
		tbl.id = 'headline-table';
		var hr = el('tr');
		heads.forEach(function (h) { hr.appendChild(el('th', null, h)); });
		tbl.appendChild(el('thead')).appendChild(hr);
		var tbody = tbl.appendChild(el('tbody'));
		var wrap = el('div', 'tablewrap');
		wrap.appendChild(tbl);
		b.appendChild(wrap);
		var signed = function (v) { return v === null ? '' : (v > 0 ? '+' : '') + (100 * v).toFixed(1) + ' pt'; };
		var drawTable = function () {
			while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
			hl.rows.filter(function (x) { return x[C('gpus')] === Number(pick.value); }).forEach(function (x) {
				var tr = el('tr');
				var cells = [
					[x[C('model')]], [x[C('hw')]], [x[C('layout')], 'layout'], [x[C('tokens_per_s_per_gpu')] === null ? '' : Number(x[C('tokens_per_s_per_gpu')].toPrecision(4)), 'num'],
					[pctIv(x[C('comm_share')], x[C('comm_share_lo90')], x[C('comm_share_hi90')]), 'num iv'],
					[pctIv(x[C('exposed_share')], x[C('exposed_share_lo90')], x[C('exposed_share_hi90')]), 'num iv'],
					[x[C('top_exposed_type')] ? x[C('top_exposed_type')].toUpperCase() + ' ' + pct(x[C('top_exposed_frac')]) : 'none'],
					[signed(x[C('next_comm_share_change')]), 'num'],
					[signed(x[C('next_exposed_share_change')]), 'num'],
					[x[C('next_tokens_per_gpu_ratio')] === null ? '' : '\u00d7' + x[C('next_tokens_per_gpu_ratio')].toFixed(2), 'num']];
				cells.forEach(function (c) { tr.appendChild(el('td', c[1] || null, c[0])); });
				tbody.appendChild(tr);
			});
		};
		pick.addEventListener('change', drawTable);
		drawTable();
		fileNote(b, 'headline');
		if (f) fileNote(b, 'findings');
		var draws = [exposedByType(s, pick), memoryChart(s, pick), sensitivityChart(s, pick)];
		pick.addEventListener('change', function () { draws.forEach(function (d) { if (d) d(); }); });
	}

	/* Rows of t at the picked GPU count and their labels "model, hardware". */
	function atCount(t, pick) {
		var rows = t.rows.filter(function (x) { return x[col(t, 'gpus')] === Number(pick.value); });
		return {rows: rows, labels: rows.map(function (x) { return x[col(t, 'model')] + ' \u00b7 ' + x[col(t, 'hw')]; })};
	}

	function exposedByType(s, pick) {
		var t = T.exposed_by_type, unit = D.unit || 's';
		if (!t || !t.rows.length) return null;
		var b = sub(s, 'Exposed communication by type',
			'Share of the step that each communication type leaves exposed, best layout per model and hardware at the picked GPU count; whiskers: 90% interval of the total exposed time.');
		var types = TYPES.filter(function (k) {
			var c = col(t, 'exposed_' + k + '_' + unit);
			return c >= 0 && t.rows.some(function (x) { return x[c] > 0; });
		});
		var chart = stackedBar(chartBox(b, 'chart-exposed-type', 400), [], types.map(function (k) {
			return {label: k.toUpperCase() + ' exposed', data: [], color: TYPE_COLOR[k]};
		}), 'share of the step', true);
		return pickedChart(chart, t, pick, b, 'exposed_by_type', function (a) {
			var step = col(t, 'step_' + unit);
			var share = function (c) { return a.rows.map(function (x) { return c >= 0 && x[c] !== null && x[step] ? x[c] / x[step] : null; }); };
			types.forEach(function (k, i) { chart.data.datasets[i].data = share(col(t, 'exposed_' + k + '_' + unit)); });
			chart.data.whiskers = {lo: share(col(t, 'exposed_' + unit + '_lo')), hi: share(col(t, 'exposed_' + unit + '_hi'))};
			/* The axis reaches the top whisker, not only the top bar. */
			chart.options.scales.x.suggestedMax = Math.max.apply(null, chart.data.whiskers.hi.concat([0]));
		});
	}

	function memoryChart(s, pick) {
		var t = T.memory;
		if (!t || !t.rows.length || col(t, 'mem_gb') < 0) return null;
		var b = sub(s, 'Memory per GPU against HBM',
			'Best layout per model and hardware at the picked GPU count: parameters and optimizer state, activations, buffers; grey: the GPU\'s HBM.');
		var parts = [['mem_params_gb', 'parameters + optimizer', '#1f77b4'], ['mem_act_gb', 'activations', '#2ca02c'],
			['mem_buf_gb', 'buffers', '#9467bd']].filter(function (p) { return col(t, p[0]) >= 0; });
		if (!parts.length) parts = [['mem_gb', 'memory', '#1f77b4']];
		var sets = parts.map(function (p) { return {label: p[1], data: [], backgroundColor: p[2], borderWidth: 0, stack: 'mem'}; });
		if (col(t, 'hbm_gb') >= 0) sets.push({label: 'HBM', data: [], backgroundColor: '#b0b6bf', borderWidth: 0, stack: 'hbm'});
		var chart = new Chart(chartBox(b, 'chart-memory', 400), {
			type: 'bar', data: {labels: [], datasets: sets},
			options: {indexAxis: 'y', plugins: {legend: {position: 'top'}},
				scales: {x: {stacked: true, title: {display: true, text: 'GB per GPU'}}, y: {stacked: true}}}
		});
		return pickedChart(chart, t, pick, b, 'memory', function (a) {
			parts.forEach(function (p, i) { chart.data.datasets[i].data = a.rows.map(function (x) { return x[col(t, p[0])]; }); });
			if (col(t, 'hbm_gb') >= 0) chart.data.datasets[parts.length].data = a.rows.map(function (x) { return x[col(t, 'hbm_gb')]; });
		});
	}

	function sensitivityChart(s, pick) {
		var t = T.sensitivity;
		if (!t || !t.rows.length) return null;
		var factors = [['gain_compute', '2\u00d7 compute'], ['gain_hbm_bw', '2\u00d7 HBM bandwidth'], ['gain_hbm_cap', '2\u00d7 HBM capacity'],
			['gain_intra_bw', '2\u00d7 intra-node bandwidth'], ['gain_inter_bw', '2\u00d7 inter-node bandwidth']].filter(function (x) { return col(t, x[0]) >= 0; });
		var b = sub(s, 'Sensitivity: what doubling one hardware factor buys',
			'Tokens/s gain of the chosen scenario (best layout at the picked GPU count) when one factor is doubled, everything else kept.');
		var which = picker(b, 'scenario: ', []);
		var chart = new Chart(chartBox(b, 'chart-sensitivity', 260), {
			type: 'bar', data: {labels: factors.map(function (x) { return x[1]; }), datasets: [{label: 'tokens/s gain (%)', data: [], backgroundColor: '#1f77b4'}]},
			options: {indexAxis: 'y', plugins: {legend: {display: false}}, scales: {x: {title: {display: true, text: 'tokens/s gain (%)'}, min: 0}}}
		});
		var a;
		var drawOne = function () {
			var x = a.rows[Number(which.value)] || a.rows[0];
			chart.data.datasets[0].data = factors.map(function (fc) { var v = x ? x[col(t, fc[0])] : null; return v === null ? null : 100 * (v - 1); });
			chart.update();
		};
		var draw = function () {
			a = atCount(t, pick);
			while (which.firstChild) which.removeChild(which.firstChild);
			a.labels.forEach(function (l, i) { var o = el('option', null, l + ' (' + a.rows[i][col(t, 'layout')] + ')'); o.value = String(i); which.appendChild(o); });
			drawOne();
		};
		which.addEventListener('change', drawOne);
		draw();
		fileNote(b, 'sensitivity');
		return draw;
	}

	/* Step time of one model: its best layouts, or the fastest of one (hardware, GPU count). */
	function stepTimeChart(b, pt, unit) {
		var C = function (n) { return col(pt, n); }, LIMIT = 40;
		var best = {};
		if (T.best_layout) column(T.best_layout, 'scenario').forEach(function (i) { best[i] = 1; });
		var models = uniq(column(pt, 'model'));
		var mSel = picker(b, 'model: ', models);
		var vSel = picker(b, ' show: ', []);
		var info = el('span', 'note');
		b.appendChild(info);
		var chart = stackedBar(chartBox(b, 'chart-proj-time', 400), [], [
			{label: 'compute only', data: [], color: '#1f77b4'},
			{label: 'hidden comm', data: [], color: '#2ca02c'},
			{label: 'exposed comm', data: [], color: COMM},
			{label: 'bubble', data: [], color: '#f2b134'}
		], unit, true);
		var views = function () {
			var rows = pt.rows.filter(function (x) { return x[C('model')] === mSel.value; });
			while (vSel.firstChild) vSel.removeChild(vSel.firstChild);
			var o = el('option', null, 'best layout per hardware and GPU count');
			o.value = 'best';
			vSel.appendChild(o);
			uniq(rows.map(function (x) { return x[C('hw')] + '|' + x[C('gpus')]; })).forEach(function (k) {
				var p = k.split('|');
				var op = el('option', null, 'fastest layouts on ' + p[0] + ' at ' + p[1] + ' GPUs');
				op.value = k;
				vSel.appendChild(op);
			});
		};
		var draw = function () {
			var rows = pt.rows.filter(function (x) { return x[C('model')] === mSel.value; }), labels;
			if (vSel.value === 'best') {
				rows = rows.filter(function (x) { return best[x[C('scenario')]]; });
				labels = rows.map(function (x) { return x[C('hw')] + ' \u00d7' + x[C('gpus')]; });
				info.textContent = ' ' + rows.length + ' best layouts';
			} else {
				var p = vSel.value.split('|');
				rows = rows.filter(function (x) { return x[C('hw')] === p[0] && String(x[C('gpus')]) === p[1]; })
					.sort(function (x, y) { return x[C('step_' + unit)] - y[C('step_' + unit)]; });
				info.textContent = ' the ' + Math.min(LIMIT, rows.length) + ' fastest of ' + rows.length + ' layouts that fit';
				rows = rows.slice(0, LIMIT);
				labels = rows.map(function (x) { return x[C('layout')]; });
			}
			chart.data.labels = labels;
			['compute_only', 'hidden', 'exposed', 'bubble'].forEach(function (k, i) {
				chart.data.datasets[i].data = rows.map(function (x) { return x[C(k + '_' + unit)]; });
			});
			fitRows(chart, rows.length);
			chart.update();
		};
		mSel.addEventListener('change', function () { views(); draw(); });
		vSel.addEventListener('change', draw);
		views();
		draw();
	}

	/* ---- trace section ---- */
	function traceSection() {
		var r = T.ranks;
		if (!r) return;
		var s = section('trace', 'Trace: where the step time goes');
		var runs = uniq(column(r, 'run'));
		var lab = r.rows.map(function (row) {
			var p = runs.length > 1 ? row[col(r, 'run')] + ' ' : '';
			return p + 'rank ' + row[col(r, 'rank')] + (row[col(r, 'device')] !== row[col(r, 'rank')] ? '/dev ' + row[col(r, 'device')] : '');
		});
		/* One chart per run: a 13 ms step and a 660 ms step on one axis
		   would hide the shorter run's bars. */
		var b = sub(s, 'Per rank: compute, hidden and exposed communication, idle',
			'Stacked to the span of each device: compute-only + hidden comm (under compute) + exposed comm + idle = span. One chart (and scale) per run.');
		runs.forEach(function (run, ri) {
			var idx = [];
			r.rows.forEach(function (row, i) { if (row[col(r, 'run')] === run) idx.push(i); });
			var pick = function (name) { var c = col(r, name); return idx.map(function (i) { return r.rows[i][c]; }); };
			b.appendChild(el('h4', null, 'run ' + run));
			stackedBar(chartBox(b, 'chart-ranks-' + ri, Math.max(200, 24 * idx.length + 90)),
				idx.map(function (i) { return lab[i]; }), [
					{label: 'compute only', data: pick('compute_only_ms'), color: '#1f77b4'},
					{label: 'hidden comm', data: pick('hidden_ms'), color: '#2ca02c'},
					{label: 'exposed comm', data: pick('exposed_ms'), color: COMM},
					{label: 'idle', data: pick('idle_ms'), color: '#f2b134'}
				], 'ms', true);
		});
		dataTable(b, r);
		fileNote(b, 'ranks');

		var c = T.classes;
		if (c && c.rows.length) {
			b = sub(s, 'Time per operator class', 'Union of each class\'s kernels per device, summed over devices (ms); red: communication classes. One chart per run.');
			uniq(column(c, 'run')).forEach(function (run, ri) {
				var rows = c.rows.filter(function (x) { return x[col(c, 'run')] === run; });
				var names = rows.map(function (x) { return x[col(c, 'class')]; });
				var part = function (comm) {
					return rows.map(function (x) { return !!x[col(c, 'is_comm')] === comm ? x[col(c, 'time_ms')] : null; });
				};
				b.appendChild(el('h4', null, 'run ' + run));
				stackedBar(chartBox(b, 'chart-classes-' + ri, Math.max(160, 24 * names.length + 80)), names, [
					{label: 'compute and memory classes', data: part(false), color: '#1f77b4'},
					{label: 'communication classes', data: part(true), color: COMM}
				], 'ms', true);
			});
			dataTable(b, c);
			fileNote(b, 'classes');
		}

		var tk = T.top_kernels;
		if (tk && tk.rows.length) {
			b = sub(s, 'Kernels that take the most time', 'Per run, by total device time; share of all kernel time of the run.');
			dataTable(b, tk, {interactive: true, page: 50});
			fileNote(b, 'top_kernels');
		}

		var co = T.collectives;
		b = sub(s, 'Collectives: achieved bus bandwidth against message size',
			'One point per (rank, collective, size); bus bandwidth as nccl-tests defines it.' +
			(T.collective_model ? ' Lines: fitted collective models from the database.' : ''));
		if (co && co.rows.length) {
			var kinds = uniq(column(co, 'collective'));
			var ds = kinds.map(function (k, i) {
				return {label: k, showLine: false, pointRadius: 4,
					backgroundColor: PALETTE[i % PALETTE.length], borderColor: PALETTE[i % PALETTE.length],
					data: co.rows.filter(function (x) { return x[2] === k && x[8] !== null && x[3] > 0; })
						.map(function (x) { return {x: x[3], y: x[8]}; })};
			});
			var m = T.collective_model;
			if (m) {
				uniq(column(m, 'model_id')).forEach(function (id, i) {
					var rows = m.rows.filter(function (x) { return x[0] === id; });
					ds.push({label: 'model ' + id + ': ' + rows[0][col(m, 'collective')] + ' ' + rows[0][col(m, 'gpu')] + ' n=' + rows[0][col(m, 'nranks')],
						type: 'line', showLine: true, pointRadius: 0, borderDash: [6, 3], borderWidth: 2,
						borderColor: PALETTE[(i + 3) % PALETTE.length], backgroundColor: PALETTE[(i + 3) % PALETTE.length],
						data: rows.map(function (x) { return {x: x[col(m, 'bytes')], y: x[col(m, 'busbw_gbps')]}; })});
				});
			}
			new Chart(chartBox(b, 'chart-collectives', 380), {
				type: 'scatter', data: {datasets: ds},
				options: {scales: {
					x: {type: 'logarithmic', title: {display: true, text: 'message size (bytes)'}},
					y: {title: {display: true, text: 'bus bandwidth (GB/s)'}}}}
			});
			dataTable(b, co);
			fileNote(b, 'collectives');
			if (m) fileNote(b, 'collective_model');
		} else {
			b.appendChild(el('p', 'note', 'No collective in this trace carries its message size (PyTorch >= 2.2 traces do).'));
		}

		var k = T.skew;
		if (k) {
			b = sub(s, 'Rank skew', 'Deviation of each device from the run\'s mean busy and exposed-communication time; start offset against the earliest device.');
			var dev = column(k, 'busy_vs_mean_pct').concat(column(k, 'exposed_vs_mean_pct'));
			if (dev.every(function (v) { return !v; })) {
				b.appendChild(el('p', 'note', 'No skew: every device of each run has the same busy and exposed time (or there is one device).'));
			} else new Chart(chartBox(b, 'chart-skew', 300), {
				type: 'bar',
				data: {labels: lab, datasets: [
					{label: 'busy vs mean (%)', data: column(k, 'busy_vs_mean_pct'), backgroundColor: '#1f77b4'},
					{label: 'exposed comm vs mean (%)', data: column(k, 'exposed_vs_mean_pct'), backgroundColor: COMM}]},
				options: {scales: {y: {title: {display: true, text: '% from the run mean'}}}}
			});
			if (T.skew_summary) dataTable(b, T.skew_summary);
			dataTable(b, k);
			fileNote(b, 'skew');
			fileNote(b, 'skew_summary');
		}
	}

	/* ---- projection section ---- */
	function projectionSection() {
		var sc = T.scenarios;
		if (!sc) return;
		var s = section('projection', 'Projection: scenarios');
		var unit = D.unit || 's';
		var pt = T.proj_time, b;
		if (pt && pt.rows.length) {
			b = sub(s, 'Step time per scenario',
				'compute-only + hidden comm + exposed comm + pipeline bubble = step (' + unit + '). One model at a time: its best layouts, or the fastest layouts of one hardware and GPU count.');
			stepTimeChart(b, pt, unit);
			fileNote(b, 'proj_time');
		} else {
			s.appendChild(el('p', 'note', 'No step-time breakdown: the projection lacks step/compute/exposed columns.'));
		}

		var hl = T.headline;
		if (hl && hl.rows.length) {
			b = sub(s, 'Communication share against model size',
				'One line per hardware at one GPU count (best layout of each model); the 90% interval is in the table.');
			var cpick = gpuPicker(b, hl, 'share-gpus');
			var cchart = new Chart(chartBox(b, 'chart-comm-share', 340), {
				type: 'line', data: {datasets: []},
				options: {scales: {
					x: {type: 'logarithmic', title: {display: true, text: 'model size (B parameters)'}},
					y: {title: {display: true, text: 'communication share of the step'}, min: 0}}}
			});
			var drawShare = function () {
				var rows = hl.rows.filter(function (x) { return x[col(hl, 'gpus')] === Number(cpick.value); });
				cchart.data.datasets = uniq(rows.map(function (x) { return x[col(hl, 'hw')]; })).map(function (h, i) {
					return {label: h, borderColor: PALETTE[i % PALETTE.length], backgroundColor: PALETTE[i % PALETTE.length],
						pointRadius: 4, borderWidth: 2,
						data: rows.filter(function (x) { return x[col(hl, 'hw')] === h; }).map(function (x) {
							return {x: x[col(hl, 'params_b')], y: x[col(hl, 'comm_share')]};
						})};
				});
				cchart.update();
			};
			cpick.addEventListener('change', drawShare);
			drawShare();
			fileNote(b, 'headline');
		}

		var hm = T.exposed_heatmap;
		if (hm && hm.rows.length) {
			b = sub(s, 'Exposed communication share: model size x GPU count',
				'Best layout per cell; darker red = more of the step is communication nothing hides.');
			var lo = Infinity, hi = -Infinity;
			hm.rows.forEach(function (x) { x.slice(3).forEach(function (v) { if (v !== null) { lo = Math.min(lo, v); hi = Math.max(hi, v); } }); });
			var tb = dataTable(b, hm, {cellStyle: function (td, v, c) {
				if (c < 3 || v === null) return;
				var f = hi > lo ? (v - lo) / (hi - lo) : 0;
				td.style.background = 'hsl(' + Math.round(120 * (1 - f)) + ',70%,' + Math.round(80 - 25 * f) + '%)';
			}});
			tb.classList.add('heat');
			fileNote(b, 'exposed_heatmap');
		}

		var sl = T.scaling;
		if (sl && sl.rows.length) {
			b = sub(s, 'Throughput against GPU count', 'Best layout per GPU count; dashed: ideal linear scaling from the smallest count.');
			var models = uniq(column(sl, 'model'));
			var pick = document.createElement('select');
			models.forEach(function (m) { var o = el('option', null, m); o.value = m; pick.appendChild(o); });
			pick.value = models[models.length - 1];
			var lbl = el('label', null, 'model: ');
			lbl.appendChild(pick);
			b.appendChild(lbl);
			var chart = new Chart(chartBox(b, 'chart-scaling', 360), {
				type: 'line', data: {datasets: []},
				options: {scales: {
					x: {type: 'logarithmic', title: {display: true, text: 'GPUs'}},
					y: {type: 'logarithmic', title: {display: true, text: 'tokens/s'}}}}
			});
			var drawScaling = function () {
				var rows = sl.rows.filter(function (x) { return x[1] === pick.value; });
				var ds = [];
				uniq(rows.map(function (x) { return x[0]; })).forEach(function (h, i) {
					var r2 = rows.filter(function (x) { return x[0] === h; });
					var color = PALETTE[i % PALETTE.length];
					ds.push({label: h, borderColor: color, backgroundColor: color, pointRadius: 4, borderWidth: 2,
						data: r2.map(function (x) { return {x: x[3], y: x[4]}; })});
					ds.push({label: h + ' ideal', borderColor: color, backgroundColor: color, borderDash: [6, 4], pointRadius: 0, borderWidth: 1.5,
						data: r2.map(function (x) { return {x: x[3], y: x[5]}; })});
				});
				chart.data.datasets = ds;
				chart.update();
			};
			pick.addEventListener('change', drawScaling);
			drawScaling();
			dataTable(b, sl);
			fileNote(b, 'scaling');
		}

		if (T.best_layout) {
			b = sub(s, 'Best layout per GPU count', 'The fitting, valid scenario with the most tokens/s for each hardware, model and GPU count.');
			dataTable(b, T.best_layout, {interactive: true, page: 100});
			fileNote(b, 'best_layout');
		}
		b = sub(s, 'All scenarios', 'Click a column to sort; filter with words or col>x, col<x, col=x, col!=x (e.g. "gpus>=64 H100").');
		dataTable(b, sc, {interactive: true, page: 200});
		fileNote(b, 'scenarios');
	}

	/* What priced the projection, as the projection recorded it (never the
	   report's database), then the fits the report's database holds. */
	function modelsSection() {
		var m = T.models, p = T.provenance, s, b;
		if (!m && !p) return;
		s = section('models', 'Where these numbers come from');
		[['provenance', 'What priced the projection',
		  'As cvc project recorded it when it priced the projection (its JSON, or the .provenance.json file beside its CSV); the database given to this report plays no part in it.'],
		 ['model_origins', 'Where each GPU\'s figures come from',
		  'Per GPU the projection priced: GEMMs and attention per dtype, memory-bound ops per class, collectives per model that priced them (priced: how many times). model_id names a fitted model listed below.'],
		 ['provenance_models', 'Fitted models that priced the projection',
		  'r2 on log time; MAPE in-sample; extrapolation MAPE fits the smaller half of the sizes and predicts the larger half; domain: the sizes fitted (flop or bytes).'],
		 ['provenance_catalog', 'Hardware catalog entries used', 'Spec-sheet figures and where they come from.']
		].forEach(function (x) {
			if (!T[x[0]]) return;
			b = sub(s, x[1], x[2]);
			dataTable(b, T[x[0]], T[x[0]].rows.length > 20 ? {interactive: true, page: 100} : {});
			fileNote(b, x[0]);
		});
		if (m) {
			b = sub(s, 'Fitted models in the report\'s database' + (D.db ? ' (' + D.db + ')' : ''),
				'r2 on log time; MAPE in-sample; extrapolation MAPE fits the smaller half of the sizes and predicts the larger half.');
			dataTable(b, m, {interactive: true, page: 100});
			fileNote(b, 'models');
		}
	}

	function assumptionsSection() {
		var w = T.proj_warnings, b;
		if (!D.assumptions && !(D.notes && D.notes.length) && !w) return;
		var s = section('assumptions', 'Assumptions and inputs');
		(D.notes || []).forEach(function (n) { s.appendChild(el('p', 'note', n)); });
		if (w) {
			b = sub(s, 'Warnings: figures priced past or without measurements',
				'The projector\'s warnings over the priced scenarios, per hardware: how many carry each (share_pct of that hardware\'s scenarios) and its largest figure (x: how far past the measured sizes; %: share of that component\'s time).');
			dataTable(b, w, {interactive: true, page: 50});
			fileNote(b, 'proj_warnings');
		}
		if (D.assumptions) s.appendChild(el('pre', 'assume', D.assumptions));
	}

	/* Communication's colour: on at most one series of a chart, and only
	   on a series of communication. */
	function colourFaults(ch, id) {
		var bad = [];
		var comm = ch.data.datasets.filter(function (d) {
			return [].concat(d.backgroundColor || [], d.borderColor || []).some(function (x) {
				return String(x).toLowerCase() === COMM;
			});
		});
		if (comm.length > 1) bad.push(id + ': ' + comm.length + ' series share the communication colour');
		comm.forEach(function (d) {
			if (!/comm/i.test(d.label || '')) bad.push(id + ': series "' + d.label + '" has the communication colour');
		});
		return bad;
	}
	/* Readable labels: tick fonts of at least MIN_FONT_PX, and on a category
	   axis every category labelled with a font's height of room each. */
	function labelFaults(ch, id) {
		var bad = [];
		Object.keys(ch.scales).forEach(function (k) {
			var sc = ch.scales[k], cat = sc.type === 'category';
			var shown = sc.options.display !== false && sc.options.ticks.display !== false;
			if (!shown) {
				if (cat && ch.data.labels.length) bad.push(id + ' ' + k + ': category labels hidden');
				return;
			}
			var font = Chart.helpers.toFont(sc.options.ticks.font).size;
			if (font < MIN_FONT_PX) bad.push(id + ' ' + k + ': tick font ' + font + ' px');
			if (!cat) return;
			var n = ch.data.labels.length, room = (sc.isHorizontal() ? sc.width : sc.height) / Math.max(1, n);
			if (sc.ticks.length < n) bad.push(id + ' ' + k + ': ' + (n - sc.ticks.length) + ' of ' + n + ' labels skipped');
			if (n && room < font) bad.push(id + ' ' + k + ': ' + room.toFixed(1) + ' px per label');
		});
		return bad;
	}
	/* The headline table: present, on the first screen, intervals where the data has them. */
	function headlineFacts(bad) {
		var hl = T.headline;
		if (!hl || !hl.rows.length) return ' headline=none';
		var t = document.getElementById('headline-table');
		if (!t) {
			bad.push('headline: no table');
			return ' headline=missing';
		}
		var top = Math.round(t.getBoundingClientRect().top + window.scrollY);
		var rows = t.tBodies[0].rows.length, iv = 0, want = 0, g = Number(document.getElementById('headline-gpus').value);
		t.querySelectorAll('td.iv').forEach(function (td) { if (/\(\d[\d.]*\u2013\d[\d.]*%\)$/.test(td.textContent)) iv++; });
		hl.rows.forEach(function (x) {
			if (x[col(hl, 'gpus')] !== g) return;
			['comm_share_lo90', 'exposed_share_lo90'].forEach(function (c) { if (x[col(hl, c)] !== null) want++; });
		});
		if (!rows) bad.push('headline: no rows');
		if (iv < want) bad.push('headline: ' + iv + ' of ' + want + ' intervals shown');
		if (top >= window.innerHeight) bad.push('headline: table at ' + top + ' px, below the first screen (' + window.innerHeight + ' px)');
		return ' headline=rows:' + rows + ',intervals:' + iv + ',top:' + top + ',screen:' + window.innerHeight;
	}

	function selfCheck() {
		var out = document.getElementById('cvc-selfcheck');
		var bad = [], canv = document.querySelectorAll('canvas');
		canv.forEach(function (c) {
			var d, ink = 0, color = 0;
			/* Only the plot area counts: a legend or axes alone are not a chart. */
			var ch = window.Chart && Chart.getChart(c), a = ch && ch.chartArea;
			var sx = c.clientWidth ? c.width / c.clientWidth : 1, sy = c.clientHeight ? c.height / c.clientHeight : 1;
			var x0 = a ? Math.floor(a.left * sx) : 0, y0 = a ? Math.floor(a.top * sy) : 0;
			var w = a ? Math.max(1, Math.ceil((a.right - a.left) * sx)) : c.width;
			var h = a ? Math.max(1, Math.ceil((a.bottom - a.top) * sy)) : c.height;
			try {
				d = c.getContext('2d').getImageData(x0, y0, w, h).data;
			} catch (e) {
				bad.push(c.id + ': unreadable');
				return;
			}
			for (var i = 0; i < d.length; i += 4) {
				if (d[i + 3] === 0) continue;
				ink++;
				/* Axes and text are grey; data is drawn in saturated colours. */
				if (Math.max(d[i], d[i + 1], d[i + 2]) - Math.min(d[i], d[i + 1], d[i + 2]) > 60) color++;
			}
			if (c.width === 0 || c.height === 0 || ink < 50 || color < 20) bad.push((c.id || 'canvas') + ': blank (' + ink + ' ink, ' + color + ' data px)');
		});
		var errs = window.__cvcErrors || [], colour = [], labels = [], head = [];
		Object.keys(Chart.instances).forEach(function (k) {
			var ch = Chart.instances[k], id = ch.canvas.id || 'canvas';
			colour = colour.concat(colourFaults(ch, id));
			labels = labels.concat(labelFaults(ch, id));
		});
		var facts = headlineFacts(head);
		var all = bad.concat(colour, labels, head);
		var ok = rendered && errs.length === 0 && all.length === 0;
		out.setAttribute('data-verdict', ok ? 'pass' : 'fail');
		out.textContent = 'CVC-SELFCHECK ' + (ok ? 'PASS' : 'FAIL') + ' canvases=' + canv.length +
			' errors=' + errs.length + ' blank=' + bad.length + ' colour=' + colour.length +
			' labels=' + labels.length + facts + (rendered ? '' : ' (render did not finish)') +
			(errs.length ? '\n' + errs.join('\n') : '') + (all.length ? '\n' + all.join('\n') : '');
	}

	var meta = document.getElementById('meta');
	meta.textContent = 'cvc ' + (D.version || '') + (D.db ? ' | database: ' + D.db : '') +
		(D.projection ? ' | projection: ' + D.projection : '') + (D.run ? ' | run: ' + D.run : '');
	headlineSection();
	traceSection();
	projectionSection();
	modelsSection();
	assumptionsSection();
	rendered = true;
	window.addEventListener('load', function () { setTimeout(selfCheck, 0); });
	if (document.readyState === 'complete') setTimeout(selfCheck, 0);
})();
