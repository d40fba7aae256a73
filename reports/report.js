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
	var main = document.getElementById('main');
	var toc = document.getElementById('toc');
	var rendered = false;
	var PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b',
		'#e377c2', '#17becf', '#bcbd22', '#0b4f8a', '#b8860b', '#006d5b'];

	Chart.defaults.animation = false;
	Chart.defaults.responsive = true;
	Chart.defaults.maintainAspectRatio = false;
	Chart.defaults.font.size = 12;

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
		var b = sub(s, 'Per rank: compute, hidden and exposed communication, idle',
			'Stacked to the span of each device: compute-only + hidden comm (under compute) + exposed comm + idle = span.');
		stackedBar(chartBox(b, 'chart-ranks', 340), lab, [
			{label: 'compute only', data: column(r, 'compute_only_ms'), color: '#1f77b4'},
			{label: 'hidden comm', data: column(r, 'hidden_ms'), color: '#2ca02c'},
			{label: 'exposed comm', data: column(r, 'exposed_ms'), color: '#d62728'},
			{label: 'idle', data: column(r, 'idle_ms'), color: '#f2b134'}
		], 'ms');
		dataTable(b, r);
		fileNote(b, 'ranks');

		var c = T.classes;
		if (c && c.rows.length) {
			b = sub(s, 'Time per operator class', 'Union of each class\'s kernels per device, summed over devices (ms).');
			var classes = uniq(column(c, 'class'));
			var sets = uniq(column(c, 'run')).map(function (run, i) {
				return {label: run, color: PALETTE[i % PALETTE.length], data: classes.map(function (k) {
					var row = c.rows.find(function (x) { return x[0] === run && x[1] === k; });
					return row ? row[col(c, 'time_ms')] : 0;
				})};
			});
			new Chart(chartBox(b, 'chart-classes', Math.max(240, 26 * classes.length + 80)), {
				type: 'bar',
				data: {labels: classes, datasets: sets.map(function (x) {
					return {label: x.label, data: x.data, backgroundColor: classes.map(function (k) {
						var row = c.rows.find(function (y) { return y[1] === k; });
						return row && row[col(c, 'is_comm')] ? '#d62728' : x.color;
					})};
				})},
				options: {indexAxis: 'y', plugins: {legend: {display: sets.length > 1}},
					scales: {x: {title: {display: true, text: 'ms (red: communication)'}}}}
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
					{label: 'exposed comm vs mean (%)', data: column(k, 'exposed_vs_mean_pct'), backgroundColor: '#d62728'}]},
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
				'compute-only + hidden comm + exposed comm + pipeline bubble = step (' + unit + '). Hover a bar for the scenario.');
			/* Thousands of bars are unreadable: by default only the best layout
			   of each (hardware, model, GPU count); a selector shows them all. */
			var best = {}, bl = T.best_layout, ch;
			if (bl) column(bl, 'scenario').forEach(function (i) { best[i] = 1; });
			var bestRows = pt.rows.filter(function (x) { return best[x[0]]; });
			var show = el('select');
			[['best', 'best layout per hardware, model and GPU count (' + bestRows.length + ')'],
				['all', 'all scenarios (' + pt.rows.length + ')']].forEach(function (o) {
				var op = el('option', null, o[1]);
				op.value = o[0];
				show.appendChild(op);
			});
			show.value = bestRows.length && pt.rows.length > 150 ? 'best' : 'all';
			var sl2 = el('label', null, 'show: ');
			sl2.appendChild(show);
			b.appendChild(sl2);
			ch = stackedBar(chartBox(b, 'chart-proj-time', 380), [], [
				{label: 'compute only', data: [], color: '#1f77b4'},
				{label: 'hidden comm', data: [], color: '#2ca02c'},
				{label: 'exposed comm', data: [], color: '#d62728'},
				{label: 'bubble', data: [], color: '#f2b134'}
			], unit);
			var drawTime = function () {
				var rows = show.value === 'best' ? bestRows : pt.rows;
				ch.data.labels = rows.map(function (x) { return x[1]; });
				for (var k = 0; k < 4; k++) ch.data.datasets[k].data = rows.map(function (x) { return x[k + 2]; });
				ch.options.scales.x.ticks = {display: rows.length <= 60};
				ch.options.scales.x.grid = {display: rows.length <= 60};
				ch.update();
			};
			show.addEventListener('change', drawTime);
			drawTime();
			fileNote(b, 'proj_time');
		} else {
			s.appendChild(el('p', 'note', 'No step-time breakdown: the projection lacks step/compute/exposed columns.'));
		}

		var cs = T.comm_share;
		if (cs && cs.rows.length) {
			b = sub(s, 'Communication share against model size',
				'One line per hardware; mean over GPU counts of the best layout at each count.');
			var hws = uniq(column(cs, 'hw'));
			var numeric = cs.rows.every(function (x) { return x[col(cs, 'params_b')] !== null; });
			var labels = numeric ? undefined : uniq(column(cs, 'model'));
			new Chart(chartBox(b, 'chart-comm-share', 340), {
				type: 'line',
				data: {labels: labels, datasets: hws.map(function (h, i) {
					var rows = cs.rows.filter(function (x) { return x[0] === h; });
					return {label: h, borderColor: PALETTE[i % PALETTE.length], backgroundColor: PALETTE[i % PALETTE.length],
						pointRadius: 4, borderWidth: 2,
						data: rows.map(function (x) { return numeric ? {x: x[2], y: x[3]} : {x: x[1], y: x[3]}; })};
				})},
				options: {scales: {
					x: numeric ? {type: 'logarithmic', title: {display: true, text: 'model size (B parameters)'}}
						: {type: 'category', title: {display: true, text: 'model'}},
					y: {title: {display: true, text: 'communication share'}, min: 0}}}
			});
			dataTable(b, cs);
			fileNote(b, 'comm_share');
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
		var errs = window.__cvcErrors || [];
		var ok = rendered && errs.length === 0 && bad.length === 0;
		out.setAttribute('data-verdict', ok ? 'pass' : 'fail');
		out.textContent = 'CVC-SELFCHECK ' + (ok ? 'PASS' : 'FAIL') + ' canvases=' + canv.length +
			' errors=' + errs.length + ' blank=' + bad.length + (rendered ? '' : ' (render did not finish)') +
			(errs.length ? '\n' + errs.join('\n') : '') + (bad.length ? '\n' + bad.join('\n') : '');
	}

	var meta = document.getElementById('meta');
	meta.textContent = 'cvc ' + (D.version || '') + (D.db ? ' | database: ' + D.db : '') +
		(D.projection ? ' | projection: ' + D.projection : '') + (D.run ? ' | run: ' + D.run : '');
	traceSection();
	projectionSection();
	modelsSection();
	assumptionsSection();
	rendered = true;
	window.addEventListener('load', function () { setTimeout(selfCheck, 0); });
	if (document.readyState === 'complete') setTimeout(selfCheck, 0);
})();
