/*
 * report_lib.js - what the parts of the report page share (window.cvc):
 * the data island, parsed once; one colour per hardware (in the order of
 * the `hardware` table: oldest generation first) and per communication
 * type for the whole page; numbers formatted for reading (3 significant
 * figures, units from the column name, thousands separators; the exact
 * value on hover); the DOM and chart helpers.  Compiled into the cvc
 * binary and inlined before report_answer.js, report_check.js and
 * report.js.  Every string from the data goes into the page through
 * textContent or canvas text, never as markup.
 */
(function () {
	'use strict';
	var cvc = window.cvc = {};
	var D = cvc.D = JSON.parse(document.getElementById('cvc-data').textContent);
	var T = cvc.T = D.tables || {};
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

	/* Red means communication and nothing else: no palette colour is COMM,
	   and a chart has at most one series in it (checked by the self-check). */
	var COMM = cvc.COMM = '#d62728';
	cvc.PALETTE = ['#1f77b4', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2',
		'#17becf', '#bcbd22', '#0b4f8a', '#b8860b', '#006d5b', '#7f7f7f'];
	/* Communication types: one colour each on every chart, distinct from
	   each other, from COMM and from the hardware colours. */
	cvc.TYPES = ['tp', 'pp', 'dp', 'fsdp', 'ep', 'cp', 'xc'];
	cvc.TYPE_COLOR = {tp: '#6a3d9a', pp: '#b15928', dp: '#ff7f00', fsdp: '#e7298a',
		ep: '#1b9e77', cp: '#a6761d', xc: '#666666'};
	/* Hardware: one colour each for the whole page, by generation. */
	var HW_PALETTE = ['#1f77b4', '#2ca02c', '#9467bd', '#17becf', '#bcbd22', '#8c564b',
		'#0b4f8a', '#b8860b', '#006d5b', '#e377c2', '#7f7f7f', '#393b79'];
	var HW = cvc.HW = T.hardware ? T.hardware.rows.map(function (r) { return r[T.hardware.columns.indexOf('hw')]; }) : [];
	cvc.hwColor = function (h) {
		var i = HW.indexOf(h);
		if (i < 0) { HW.push(h); i = HW.length - 1; }
		return HW_PALETTE[i % HW_PALETTE.length];
	};
	/* Hardware in generation order (unknown names last, as met). */
	cvc.hwOrder = function (list) {
		return list.slice().sort(function (a, b) {
			var i = HW.indexOf(a), j = HW.indexOf(b);
			return (i < 0 ? 1e9 : i) - (j < 0 ? 1e9 : j);
		});
	};
	cvc.MIN_FONT_PX = 10;

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
	/* Every colour a hardware's series was drawn in, over every update of
	   every chart (the self-check fails a hardware drawn in two). */
	cvc.hwSeen = {};
	Chart.register({id: 'cvcHwColours', afterUpdate: function (chart) {
		chart.data.datasets.forEach(function (d) {
			var h = d.cvcHw;
			if (!h) return;
			var c = String(d.borderColor || d.backgroundColor).toLowerCase();
			(cvc.hwSeen[h] = cvc.hwSeen[h] || {})[c] = 1;
		});
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
	function uniq(a) {
		var seen = {}, out = [];
		a.forEach(function (x) { var k = String(x); if (!seen[k]) { seen[k] = 1; out.push(x); } });
		return out;
	}

	/* ---- numbers for reading ---- */
	/* A column's unit from its name: 'pct' for a fraction shown as %, a
	   suffix (' s', ' GB') for a quantity, '' for a plain number. */
	function unitOf(name) {
		if (!name) return '';
		if (/(^|_)(share|frac)(_lo|_hi)?$|^(mfu|hfu)(_lo|_hi)?$|efficiency$|headroom$/.test(name)) return 'pct';
		if (/_pct$/.test(name)) return '%';
		if (/per_s/.test(name)) return /^tokens/.test(name) ? (/per_gpu/.test(name) ? ' tokens/s/GPU' : ' tokens/s') : '';
		var u = [[/_ms(_lo|_hi)?$/, ' ms'], [/_us$/, ' \u00b5s'], [/_s(_lo|_hi)?$/, ' s'], [/_gbps$/, ' GB/s'],
			[/_gb$/, ' GB'], [/_usd(_lo|_hi)?$/, ' USD'], [/_mwh$/, ' MWh'], [/_days(_lo|_hi)?$/, ' days'],
			[/_tflops$/, ' TFLOP/s']];
		for (var i = 0; i < u.length; i++) if (u[i][0].test(name)) return u[i][1];
		return '';
	}
	/* Three significant figures, thousands separators, never an exponent. */
	function num3(v) {
		var a = Math.abs(v);
		if (a === 0) return '0';
		if (a >= 1000) return Math.round(Number(v.toPrecision(3))).toLocaleString('en-US');
		if (a >= 1) return String(Number(v.toPrecision(3)));
		var d = Math.min(20, 2 - Math.floor(Math.log10(a)));
		return v.toFixed(d).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
	}
	/* A cell as the page shows it: integers that count (GPUs, ranks, sizes)
	   exactly, measures to 3 significant figures with their unit. */
	function fmt(v, name) {
		if (v === null || v === undefined) return '';
		if (typeof v !== 'number') return String(v);
		var u = unitOf(name);
		if (u === 'pct') return num3(100 * v) + '%';
		if (Number.isInteger(v) && Math.abs(v) < 1e15 && !u && !/tokens|flops|cost|hours|energy/.test(name || ''))
			return v.toLocaleString('en-US');
		return num3(v) + u;
	}
	/* A share as text, 3 significant figures with zeros kept, as the
	   sentences print it (reports/projection.c rep_pct3): 0.7% read 0.700%
	   in neither place before, the table 1 decimal, the sentences none. */
	function pct(v) {
		if (v === null || v === undefined) return '';
		var p = 100 * v, a = Math.abs(p);
		return p.toFixed(a >= 99.95 ? 0 : a >= 9.995 ? 1 : 2) + '%';
	}
	function pctIv(v, lo, hi) {
		if (lo === null || hi === null || lo === undefined || hi === undefined) return pct(v);
		return pct(v) + ' (' + pct(lo).replace('%', '') + '\u2013' + pct(hi) + ')';
	}

	/* ---- page structure ---- */
	function section(id, title) {
		var s = el('section', 'sec');
		s.id = id;
		s.appendChild(el('h2', null, title));
		document.getElementById('main').appendChild(s);
		var a = el('a', null, title);
		a.href = '#' + id;
		document.getElementById('toc').appendChild(a);
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
					var text = opts.cellText ? opts.cellText(v, c, row) : fmt(v, t.columns[c]);
					var td = el('td', typeof v === 'number' ? 'num' : null, text);
					if ((typeof v === 'number' && text !== String(v)) || (typeof v === 'string' && v.length > 80)) td.title = String(v);
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

	/* Rows of t at the picked GPU count and their labels "model, hardware". */
	function atCount(t, pick) {
		var rows = t.rows.filter(function (x) { return x[col(t, 'gpus')] === Number(pick.value); });
		return {rows: rows, labels: rows.map(function (x) { return x[col(t, 'model')] + ' \u00b7 ' + x[col(t, 'hw')]; })};
	}

	cvc.el = el; cvc.col = col; cvc.column = column; cvc.uniq = uniq;
	cvc.unitOf = unitOf; cvc.num3 = num3; cvc.fmt = fmt; cvc.pct = pct; cvc.pctIv = pctIv;
	cvc.section = section; cvc.sub = sub; cvc.chartBox = chartBox; cvc.fileNote = fileNote;
	cvc.dataTable = dataTable; cvc.stackedBar = stackedBar; cvc.gpuPicker = gpuPicker;
	cvc.picker = picker; cvc.fitRows = fitRows; cvc.pickedChart = pickedChart; cvc.atCount = atCount;
})();
