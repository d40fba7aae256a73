/*
 * report_answer.js - the report's first screen, the answer: per model the
 * communication and exposed shares of the step against the GPU count, one
 * line per hardware (small multiples: every GPU count and every hardware of
 * the study at once, the far-from-best layouts marked), the sentences of
 * the picked GPU count (findings), and what to do (advice); under it the
 * best layouts at the picked count with their intervals, exposed time by
 * type, memory against HBM and the gain from doubling each factor.
 * Uses window.cvc (report_lib.js); called by report.js.
 */
(function () {
	'use strict';
	var cvc = window.cvc, T = cvc.T, D = cvc.D;
	var el = cvc.el, col = cvc.col, column = cvc.column, uniq = cvc.uniq, sub = cvc.sub;
	var chartBox = cvc.chartBox, fileNote = cvc.fileNote, pct = cvc.pct, pctIv = cvc.pctIv;
	var picker = cvc.picker, pickedChart = cvc.pickedChart, atCount = cvc.atCount;
	var stackedBar = cvc.stackedBar, TYPES = cvc.TYPES, TYPE_COLOR = cvc.TYPE_COLOR;

	/* One small chart per model: comm share (solid) and exposed share
	   (dashed) of the best layout against the GPU count, per hardware;
	   a cross marks a layout far from the best (its flags in the tooltip). */
	function multiples(s) {
		var hl = T.headline, C = function (n) { return col(hl, n); };
		var models = uniq(column(hl, 'model'));
		var hws = cvc.hwOrder(uniq(column(hl, 'hw')));
		var box = el('div', 'answer-charts');
		box.id = 'answer-charts';
		var legend = el('div', 'hwlegend');
		hws.forEach(function (h) {
			var k = el('span', 'hwkey', h);
			k.style.borderColor = cvc.hwColor(h);
			legend.appendChild(k);
		});
		legend.appendChild(el('span', 'note', '\u2014 communication, - - exposed: share of the step; \u00d7 far from the best'));
		s.appendChild(legend);
		/* one x axis for every small multiple, the study's GPU counts: a
		   model with no layout that is valid and fits at some count shows
		   the gap there, and the charts line up */
		var counts = uniq(hl.rows.map(function (x) { return x[C('gpus')]; })).sort(function (a, b) { return a - b; });
		models.forEach(function (m, i) {
			var rows = hl.rows.filter(function (x) { return x[C('model')] === m; });
			var cell = el('div', 'multiple');
			box.appendChild(cell);
			var sets = [];
			hws.forEach(function (h) {
				var byCount = counts.map(function (n) {
					return rows.filter(function (x) { return x[C('hw')] === h && x[C('gpus')] === n; })[0] || null;
				});
				if (!byCount.some(function (x) { return x; })) return;
				var color = cvc.hwColor(h);
				[['comm_share', []], ['exposed_share', [5, 3]]].forEach(function (k) {
					sets.push({label: h + (k[1].length ? ' exposed' : ''), cvcHw: h, borderColor: color, backgroundColor: color,
						borderDash: k[1], borderWidth: 2, pointRadius: 3.5,
						pointStyle: byCount.map(function (x) { return x && x[C('flags')] ? 'crossRot' : 'circle'; }),
						pointBorderWidth: byCount.map(function (x) { return x && x[C('flags')] ? 2.5 : 1; }),
						rows: byCount, data: byCount.map(function (x) { return x ? x[C(k[0])] : null; })});
				});
			});
			new Chart(chartBox(cell, 'chart-answer-' + i, 160), {
				type: 'line', data: {labels: counts.map(function (n) { return n.toLocaleString('en-US'); }), datasets: sets},
				options: {spanGaps: true, plugins: {legend: {display: false},
					title: {display: true, text: m, padding: 4, font: {size: 13, weight: 'bold'}},
					tooltip: {callbacks: {label: function (c) {
						var x = c.dataset.rows[c.dataIndex], ex = /exposed$/.test(c.dataset.label);
						if (!x) return '';
						return c.dataset.label + ': ' + pctIv(x[C(ex ? 'exposed_share' : 'comm_share')],
							x[C(ex ? 'exposed_share_lo' : 'comm_share_lo')], x[C(ex ? 'exposed_share_hi' : 'comm_share_hi')]) +
							(x[C('flags')] ? ' \u2014 ' + x[C('flags')] : '');
					}}}},
					scales: {x: {title: {display: false}, ticks: {maxRotation: 0, autoSkip: false, font: {size: 10}}},
						y: {min: 0, max: 1, ticks: {font: {size: 10}, callback: function (v) { return Math.round(100 * v) + '%'; }}}}}
			});
		});
		s.appendChild(box);
		return legend;
	}

	/* The sentences of the picked GPU count, and what to do. */
	function words(s, pick) {
		var f = T.findings, a = T.advice;
		var ul = el('ul', 'findings');
		ul.id = 'findings';
		s.appendChild(ul);
		var draw = function () {
			while (ul.firstChild) ul.removeChild(ul.firstChild);
			if (!f) return;
			var at = f.rows.filter(function (x) { return x[col(f, 'gpus')] === Number(pick.value); });
			at.forEach(function (x) {
				var li = el('li', x[col(f, 'flagged')] ? 'flagged' : null, x[col(f, 'finding')]);
				ul.appendChild(li);
			});
			/* a model without a best layout here has its line in findings
			   (reports/absent.c: not priced here, no valid layout, or none
			   that fits); a model still without one is named, not guessed at */
			var hl = T.headline, said = uniq(at.map(function (x) { return x[col(f, 'model')]; }));
			if (hl) uniq(column(hl, 'model')).forEach(function (m) {
				if (said.indexOf(m) < 0)
					ul.appendChild(el('li', 'missing', m + ' at ' + Number(pick.value).toLocaleString('en-US') +
						' GPUs: no best layout here (its chart shows the gap)'));
			});
		};
		draw();
		if (a && a.rows.length) {
			var d = el('div', 'advice');
			d.id = 'advice';
			d.appendChild(el('h3', null, 'What to do: the most GPUs whose best layout is not far from the best, and the hardware with the most tokens/s there'));
			var ol = el('ul');
			a.rows.filter(function (x) { return x[col(a, 'recommended')] === 1; }).forEach(function (x) {
				ol.appendChild(el('li', null, x[col(a, 'advice')]));
			});
			d.appendChild(ol);
			s.appendChild(d);
		}
		return draw;
	}

	/* The best layouts at the picked GPU count, with their intervals. */
	function bestTable(b, pick) {
		var hl = T.headline, C = function (n) { return col(hl, n); };
		var heads = ['model', 'hardware', 'layout', 'tokens/s per GPU', 'comm share (90%)',
			'exposed share (90%)', 'most exposed', 'scaling efficiency', 'far from the best',
			'next gen.: \u0394 comm', '\u0394 exposed', 'tokens/s per GPU'];
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
		var draw = function () {
			while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
			hl.rows.filter(function (x) { return x[C('gpus')] === Number(pick.value); }).forEach(function (x) {
				var tr = el('tr');
				var cells = [
					[x[C('model')], 'model'], [x[C('hw')], 'hw'], [x[C('layout')], 'layout'], [cvc.fmt(x[C('tokens_per_s_per_gpu')], 'tokens_per_s_per_gpu'), 'num'],
					[pctIv(x[C('comm_share')], x[C('comm_share_lo')], x[C('comm_share_hi')]), 'num iv'],
					[pctIv(x[C('exposed_share')], x[C('exposed_share_lo')], x[C('exposed_share_hi')]), 'num iv'],
					[x[C('top_exposed_type')] ? x[C('top_exposed_type')].toUpperCase() + ' ' + pct(x[C('top_exposed_frac')]) : 'none'],
					[x[C('scaling_efficiency')] === null ? 'none: its only GPU count' : cvc.fmt(x[C('scaling_efficiency')], 'scaling_efficiency'), 'num'],
					[x[C('flags')] || '', x[C('flags')] ? 'flag' : null],
					[signed(x[C('next_comm_share_change')]), 'num'],
					[signed(x[C('next_exposed_share_change')]), 'num'],
					[x[C('next_tokens_per_gpu_ratio')] === null ? '' : '\u00d7' + x[C('next_tokens_per_gpu_ratio')].toFixed(2), 'num']];
				cells.forEach(function (c) { tr.appendChild(el('td', c[1] || null, c[0])); });
				tr.firstChild.style.borderLeft = '4px solid ' + cvc.hwColor(x[C('hw')]);
				tbody.appendChild(tr);
			});
		};
		draw();
		return draw;
	}

	function exposedByType(s, pick) {
		var t = T.exposed_by_type, unit = D.unit || 's';
		if (!t || !t.rows.length) return null;
		var b = sub(s, 'Exposed communication by type',
			'Share of the step that each communication type leaves exposed, best layout per model and hardware at the picked GPU count; whiskers: the 90% interval of the exposed share, as in the table above.');
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
			var own = function (name) { var c = col(t, name); return a.rows.map(function (x) { return c >= 0 ? x[c] : null; }); };
			types.forEach(function (k, i) { chart.data.datasets[i].data = share(col(t, 'exposed_' + k + '_' + unit)); });
			/* The exposed share's own interval, the one the headline prints. */
			chart.data.whiskers = {lo: own('exposed_share_lo'), hi: own('exposed_share_hi')};
			chart.$cvcRows = a.rows.map(function (x) { return {model: x[col(t, 'model')], hw: x[col(t, 'hw')], gpus: x[col(t, 'gpus')]}; });
			/* The axis reaches the top whisker, not only the top bar. */
			chart.options.scales.x.suggestedMax = Math.max.apply(null, chart.data.whiskers.hi.concat([0]));
		});
	}

	function memoryChart(s, pick) {
		var t = T.memory;
		if (!t || !t.rows.length || col(t, 'mem_gb') < 0) return null;
		var b = sub(s, 'Memory per GPU against HBM',
			'Best layout per model and hardware at the picked GPU count: parameters and optimizer state, activations, buffers; grey: the GPU\'s usable HBM (hbm_gb: the part of its HBM a training run can hold, not the whole).');
		var parts = [['mem_params_gb', 'parameters + optimizer', '#1f77b4'], ['mem_act_gb', 'activations', '#2ca02c'],
			['mem_buf_gb', 'buffers', '#9467bd']].filter(function (p) { return col(t, p[0]) >= 0; });
		if (!parts.length) parts = [['mem_gb', 'memory', '#1f77b4']];
		var sets = parts.map(function (p) { return {label: p[1], data: [], backgroundColor: p[2], borderWidth: 0, stack: 'mem'}; });
		if (col(t, 'hbm_gb') >= 0) sets.push({label: 'usable HBM', data: [], backgroundColor: '#b0b6bf', borderWidth: 0, stack: 'hbm'});
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
		var canvas = chartBox(b, 'chart-sensitivity', 260);
		/* every gain 1 (nothing doubled buys anything: a host-bound layout)
		   draws no bar: the chart gives way to a note, not a blank plot */
		var none = el('p', 'note', '');
		b.insertBefore(none, canvas.parentNode);
		var chart = new Chart(canvas, {
			type: 'bar', data: {labels: factors.map(function (x) { return x[1]; }), datasets: [{label: 'tokens/s gain (%)', data: [], backgroundColor: '#1f77b4'}]},
			options: {indexAxis: 'y', plugins: {legend: {display: false}}, scales: {x: {title: {display: true, text: 'tokens/s gain (%)'}, min: 0}}}
		});
		var a;
		var drawOne = function () {
			var x = a.rows[Number(which.value)] || a.rows[0];
			chart.data.datasets[0].data = factors.map(function (fc) { var v = x ? x[col(t, fc[0])] : null; return v === null ? null : 100 * (v - 1); });
			var flat = !chart.data.datasets[0].data.some(function (v) { return v !== null && Math.abs(v) >= 0.05; });
			canvas.parentNode.style.display = flat ? 'none' : '';
			canvas.setAttribute('data-cvc-empty', flat ? '1' : '0');
			none.textContent = flat ? 'Doubling any one hardware factor gains under 0.05% for ' + (x ? which.options[which.selectedIndex].textContent : 'this scenario') +
				': every gain_* is 1 to 4 digits (what sets its step, such as the host\'s launch pace, is no hardware factor), so there is no bar to draw.' : '';
			none.style.display = flat ? '' : 'none';
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

	cvc.answer = function () {
		var hl = T.headline;
		if (!hl || !hl.rows.length) return;
		var s = cvc.section('headline', 'Answer: communication per model, hardware and GPU count');
		var legend = multiples(s);
		var ctl = el('span', 'answer-pick');
		legend.insertBefore(ctl, legend.firstChild);
		var pick = cvc.gpuPicker(ctl, hl, 'headline-gpus');
		pick.title = 'the sentences and the tables below are of this GPU count';
		var draws = [words(s, pick)];
		var b = sub(s, 'Best layout per model and hardware',
			'The valid layout with the most tokens/s per GPU at the picked GPU count; communication and exposed (not hidden under compute) shares of the step with their 90% intervals; scaling efficiency against the smallest GPU count of the same hardware; the last columns compare with the next hardware generation at the same GPU count.');
		draws.push(bestTable(b, pick));
		fileNote(b, 'headline');
		if (T.findings) fileNote(b, 'findings');
		if (T.advice) fileNote(b, 'advice');
		draws.push(exposedByType(s, pick), memoryChart(s, pick), sensitivityChart(s, pick));
		pick.addEventListener('change', function () { draws.forEach(function (d) { if (d) d(); }); });
	};
})();
