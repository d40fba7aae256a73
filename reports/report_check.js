/*
 * report_check.js - the page's self-check (docs/REPORTS.md "Self-check"):
 * after rendering it writes a verdict into the hidden #cvc-selfcheck
 * (pass or fail, with every fault named): no error was reported, every
 * chart has drawn data, communication's red is on one communication series
 * per chart at most, category labels are all drawn and readable, each
 * hardware is drawn in one colour on every chart, every whisker is the
 * interval the headline table prints for the same cell, and the answer
 * (every GPU count, the sentences, what to do) ends within the first
 * screen.  Tests read the verdict with headless Chromium.
 * Uses window.cvc (report_lib.js).
 */
(function () {
	'use strict';
	var cvc = window.cvc, T = cvc.T, col = cvc.col, pct = cvc.pct;
	var COMM = cvc.COMM, MIN_FONT_PX = cvc.MIN_FONT_PX;

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
	/* The answer: the headline table with its intervals, and the first
	   screen covering every GPU count (the small multiples), the sentences
	   and what to do, ending above the fold. */
	function headlineFacts(bad) {
		var hl = T.headline;
		if (!hl || !hl.rows.length) return ' headline=none';
		var t = document.getElementById('headline-table');
		if (!t) {
			bad.push('headline: no table');
			return ' headline=missing';
		}
		var rows = t.tBodies[0].rows.length, iv = 0, want = 0, g = Number(document.getElementById('headline-gpus').value);
		t.querySelectorAll('td.iv').forEach(function (td) { if (/\(\d[\d.]*\u2013\d[\d.]*%\)$/.test(td.textContent)) iv++; });
		hl.rows.forEach(function (x) {
			if (x[col(hl, 'gpus')] !== g) return;
			['comm_share_lo', 'exposed_share_lo'].forEach(function (c) { if (x[col(hl, c)] !== null) want++; });
		});
		if (!rows) bad.push('headline: no rows');
		/* the whole table in view at the page's width: a column cut off
		   behind a scroll bar is an answer half read */
		var wrap = t.parentNode;
		if (wrap.scrollWidth > wrap.clientWidth + 1)
			bad.push('headline: table ' + wrap.scrollWidth + ' px wide in ' + wrap.clientWidth + ' px: columns cut off');
		if (iv < want) bad.push('headline: ' + iv + ' of ' + want + ' intervals shown');
		/* every GPU count of the study on the first screen */
		var counts = cvc.uniq(cvc.column(hl, 'gpus')).length, shown = 0;
		document.querySelectorAll('#answer-charts canvas').forEach(function (c) {
			var ch = Chart.getChart(c);
			if (ch) shown = Math.max(shown, ch.data.labels.length);
		});
		if (shown < counts) bad.push('answer: ' + shown + ' of ' + counts + ' GPU counts charted');
		/* every model of the study has its line at the picked count: its
		   finding, or that nothing of it is valid and fits there */
		var models = cvc.uniq(cvc.column(hl, 'model')).length;
		var said = document.querySelectorAll('#findings li').length;
		if (document.getElementById('findings') && said < models)
			bad.push('answer: ' + said + ' of ' + models + ' models said at the picked GPU count');
		var last = document.getElementById('advice') || document.getElementById('findings');
		var end = last ? Math.round(last.getBoundingClientRect().bottom + window.scrollY) : -1;
		if (end < 0) bad.push('answer: no sentences');
		else if (end > window.innerHeight) bad.push('answer: ends at ' + end + ' px, below the first screen (' + window.innerHeight + ' px)');
		return ' headline=rows:' + rows + ',intervals:' + iv + ',counts:' + shown + '/' + counts +
			',end:' + end + ',screen:' + window.innerHeight;
	}

	/* One colour per hardware over every draw of every chart. */
	function hwFacts(bad) {
		var hw = Object.keys(cvc.hwSeen), off = 0;
		hw.forEach(function (h) {
			var c = Object.keys(cvc.hwSeen[h]);
			if (c.length > 1) {
				off++;
				bad.push('hardware ' + h + ' drawn in ' + c.length + ' colours: ' + c.join(' '));
			}
		});
		return ' hw=' + hw.length + ':' + off;
	}

	/* Every whisker is the interval the headline table gives the same
	   cell (model, hardware, GPU count), in number and in the text shown. */
	function intervalFacts(bad) {
		var hl = T.headline, n = 0, off = 0;
		if (!hl) return ' intervals=none';
		var tbl = document.getElementById('headline-table');
		var text = {};
		if (tbl) Array.prototype.forEach.call(tbl.tBodies[0].rows, function (tr) {
			text[tr.cells[0].textContent + '|' + tr.cells[1].textContent] = tr.cells[5].textContent;
		});
		Object.keys(Chart.instances).forEach(function (k) {
			var ch = Chart.instances[k], w = ch.data.whiskers, rows = ch.$cvcRows;
			if (!w || !rows) return;
			rows.forEach(function (cell, i) {
				if (w.lo[i] === null || w.lo[i] === undefined) return;
				var x = hl.rows.filter(function (r) {
					return r[col(hl, 'model')] === cell.model && r[col(hl, 'hw')] === cell.hw && r[col(hl, 'gpus')] === cell.gpus;
				})[0];
				n++;
				var lo = x ? x[col(hl, 'exposed_share_lo')] : null, hi = x ? x[col(hl, 'exposed_share_hi')] : null;
				var shown = text[cell.model + '|' + cell.hw] || '';
				var want = '(' + pct(w.lo[i]).replace('%', '') + '\u2013' + pct(w.hi[i]) + ')';
				if (lo !== w.lo[i] || hi !== w.hi[i] || shown.indexOf(want) < 0) {
					off++;
					bad.push(ch.canvas.id + ': whisker of ' + cell.model + ' on ' + cell.hw + ' at ' + cell.gpus + ' GPUs is ' +
						w.lo[i] + '\u2013' + w.hi[i] + ', the table says ' + lo + '\u2013' + hi + ' (' + shown + ')');
				}
			});
		});
		return ' intervals=' + n + ':' + off;
	}

	cvc.selfCheck = function () {
		var out = document.getElementById('cvc-selfcheck');
		var bad = [], canv = document.querySelectorAll('canvas');
		canv.forEach(function (c) {
			var d, ink = 0, color = 0;
			/* a chart the page replaced by a note saying why it has no bar */
			if (c.getAttribute('data-cvc-empty') === '1' && c.parentNode.style.display === 'none') return;
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
		var facts = headlineFacts(head) + intervalFacts(head) + hwFacts(head);
		var all = bad.concat(colour, labels, head);
		var ok = cvc.rendered && errs.length === 0 && all.length === 0;
		out.setAttribute('data-verdict', ok ? 'pass' : 'fail');
		out.textContent = 'CVC-SELFCHECK ' + (ok ? 'PASS' : 'FAIL') + ' canvases=' + canv.length +
			' errors=' + errs.length + ' blank=' + bad.length + ' colour=' + colour.length +
			' labels=' + labels.length + facts + (cvc.rendered ? '' : ' (render did not finish)') +
			(errs.length ? '\n' + errs.join('\n') : '') + (all.length ? '\n' + all.join('\n') : '');
	};
})();
