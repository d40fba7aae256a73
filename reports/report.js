/*
 * report.js - renders the cvc report from the page's data (window.cvc,
 * report_lib.js): the answer first (report_answer.js), then the trace,
 * the projection, where the numbers come from and the assumptions; then
 * the self-check (report_check.js) writes its verdict into #cvc-selfcheck.
 * Compiled into the cvc binary and inlined into every page (no network).
 */
(function () {
	'use strict';
	var cvc = window.cvc, D = cvc.D, T = cvc.T;
	var el = cvc.el, col = cvc.col, column = cvc.column, uniq = cvc.uniq, section = cvc.section;
	var sub = cvc.sub, chartBox = cvc.chartBox, fileNote = cvc.fileNote, dataTable = cvc.dataTable;
	var stackedBar = cvc.stackedBar, picker = cvc.picker, fitRows = cvc.fitRows, gpuPicker = cvc.gpuPicker;
	var COMM = cvc.COMM, PALETTE = cvc.PALETTE;

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
			{label: 'host wait', data: [], color: '#8c564b'},
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
				/* hardware oldest first, as everywhere on the page, then GPUs */
				var gen = cvc.hwOrder(uniq(rows.map(function (x) { return x[C('hw')]; })));
				rows = rows.filter(function (x) { return best[x[C('scenario')]]; }).sort(function (x, y) {
					return gen.indexOf(x[C('hw')]) - gen.indexOf(y[C('hw')]) || x[C('gpus')] - y[C('gpus')];
				});
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
			/* host wait: the GPU idle on the host's launches, apart from
			   the compute it does (older projections: no column, 0) */
			['compute_only', 'host', 'hidden', 'exposed', 'bubble'].forEach(function (k, i) {
				chart.data.datasets[i].data = rows.map(function (x) { return C(k + '_' + unit) >= 0 ? x[C(k + '_' + unit)] : 0; });
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
		var b = sub(s, 'Per rank: compute, hidden and exposed communication, copies, idle',
			'Stacked to the span of each device: compute-only + hidden comm (under compute) + exposed comm + copies (memcpy and memset while no kernel runs) + idle = span. Idle by what ended each gap: host wait (the host launched that work after the gap began: the GPU ran out of queued work, which a faster GPU does not shorten), kernel wait (queued work, a gap under 20 us: launch latency) and other (queued work that still waited). One chart (and scale) per run.');
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
					{label: 'copies', data: pick('copy_ms'), color: '#8c8c8c'},
					{label: 'idle: host wait', data: pick('host_wait_ms'), color: '#f2b134'},
					{label: 'idle: kernel wait', data: pick('kernel_wait_ms'), color: '#f7d9a0'},
					{label: 'idle: other', data: pick('other_idle_ms'), color: '#b8860b'}
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
				cchart.data.datasets = cvc.hwOrder(uniq(rows.map(function (x) { return x[col(hl, 'hw')]; }))).map(function (h) {
					return {label: h, cvcHw: h, borderColor: cvc.hwColor(h), backgroundColor: cvc.hwColor(h),
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
				'Best layout per cell, with its 90% interval; hardware oldest first; darker red = more of the step is communication nothing hides.');
			var lo = Infinity, hi = -Infinity;
			hm.rows.forEach(function (x) { x.slice(3).forEach(function (v) { if (v !== null) { lo = Math.min(lo, v); hi = Math.max(hi, v); } }); });
			/* Each cell with the interval the headline gives the same
			   model, hardware and GPU count. */
			var ivOf = function (row, c) {
				var g = Number(hm.columns[c].replace('gpus=', ''));
				return hl ? hl.rows.filter(function (x) {
					return x[col(hl, 'model')] === row[1] && x[col(hl, 'hw')] === row[0] && x[col(hl, 'gpus')] === g;
				})[0] : null;
			};
			var tb = dataTable(b, hm, {cellText: function (v, c, row) {
				if (c < 3 || v === null) return cvc.fmt(v, hm.columns[c]);
				var x = ivOf(row, c);
				return x ? cvc.pctIv(v, x[col(hl, 'exposed_share_lo')], x[col(hl, 'exposed_share_hi')]) : cvc.pct(v);
			}, cellStyle: function (td, v, c) {
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
				cvc.hwOrder(uniq(rows.map(function (x) { return x[0]; }))).forEach(function (h) {
					var r2 = rows.filter(function (x) { return x[0] === h; });
					var color = cvc.hwColor(h);
					ds.push({label: h, cvcHw: h, borderColor: color, backgroundColor: color, pointRadius: 4, borderWidth: 2,
						data: r2.map(function (x) { return {x: x[3], y: x[4]}; })});
					ds.push({label: h + ' ideal', cvcHw: h, borderColor: color, backgroundColor: color, borderDash: [6, 4], pointRadius: 0, borderWidth: 1.5,
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
		b = sub(s, 'All scenarios', 'Click a column to sort; filter with words or col>x, col<x, col>=x, col<=x, col=x, col!=x (e.g. "gpus>=64 H100").');
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

	var meta = document.getElementById('meta');
	meta.textContent = 'cvc ' + (D.version || '') + (D.db ? ' | database: ' + D.db : '') +
		(D.projection ? ' | projection: ' + D.projection : '') + (D.run ? ' | run: ' + D.run : '');
	cvc.answer();
	traceSection();
	projectionSection();
	modelsSection();
	assumptionsSection();
	cvc.rendered = true;
	window.addEventListener('load', function () { setTimeout(cvc.selfCheck, 0); });
	if (document.readyState === 'complete') setTimeout(cvc.selfCheck, 0);
})();
