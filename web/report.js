// The report page's chart: draws, per device, the series the analyzer
// precomputed (docs/report-page.md is the data contract) and nothing else.
// Every number shown comes from the embedded data; this file formats and
// positions them. It computes no quantity of its own: stacking positions
// are pixel arithmetic, and the values it prints are the data's.
//
// No network, no library, no build step: the analyzer inlines this file
// into the page (web/gmt_web.c). The tables are in the HTML already and
// work without it.
'use strict';
(function () {
  const started = performance.now();

  // Series styles by index (docs/report-page.md, "Styles"): colour and a
  // pattern, so that no layer is told from its neighbours by colour alone.
  const STYLES = [
    { colour: '#0072b2', pattern: 'solid' },        // 0 framework allocated
    { colour: '#56b4e9', pattern: 'diagonal' },     // 1 reserved, not allocated
    { colour: '#e69f00', pattern: 'dots' },         // 2 outside: application
    { colour: '#009e73', pattern: 'cross' },        // 3 outside: nccl
    { colour: '#cc79a7', pattern: 'horizontal' },   // 4 outside: cublas
    { colour: '#d55e00', pattern: 'vertical' },     // 5 outside: cudnn
    { colour: '#f0e442', pattern: 'antidiagonal' }, // 6 outside: graph pool
    { colour: '#8c8c8c', pattern: 'grid' },         // 7 outside: other
    { colour: '#c8c8c8', pattern: 'sparse' },       // 8 rest of device used
    { colour: '#000000', dash: [] },                // 9 line, solid
    { colour: '#7f3c8d', dash: [7, 3] },            // 10 line, dashed
    { colour: '#555555', dash: [2, 3] },            // 11 line, dotted
  ];
  const M = { left: 96, right: 18, top: 30, bottom: 44 };  // plot margins, CSS px
  const HEIGHT = 380;

  // ---- formatting (the text report's conventions, analyzer/ gmt_fmt_bytes)
  const UNITS = ['KiB', 'MiB', 'GiB', 'TiB'];
  function fmtBytes(b) {
    if (b === 0) return '0 B';
    let u = 0;
    while (u < 3 && b >= 2 ** (10 * (u + 2))) u++;
    // hundredths of the unit, ties to even as printf's %.2f rounds them
    const big = BigInt(b) * 100n, div = 1n << BigInt(10 * (u + 1));
    let q = big / div;
    const r2 = 2n * (big % div);
    if (r2 > div || (r2 === div && (q & 1n))) q++;
    return `${b} B (${q / 100n}.${String(q % 100n).padStart(2, '0')} ${UNITS[u]})`;
  }
  function fmtSeconds(ns, digits) {
    return `${(ns / 1e9).toFixed(digits === undefined ? 9 : digits)} s`;
  }
  function fmtWall(wall, ns) {
    if (!wall) return null;
    const total = wall.ns + ns;
    const s = wall.s + Math.floor(total / 1e9);
    const frac = String(total % 1e9).padStart(9, '0');
    return new Date(s * 1000).toISOString().slice(0, 19) + '.' + frac + 'Z';
  }
  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function undelta(a) {
    const out = new Float64Array(a.length);
    let v = 0;
    for (let i = 0; i < a.length; i++) { v += a[i]; out[i] = v; }
    return out;
  }

  // ---- patterns: one small tile per style, drawn once
  function patternTile(style) {
    const c = document.createElement('canvas');
    c.width = c.height = 8;
    const g = c.getContext('2d');
    g.fillStyle = style.colour;
    g.fillRect(0, 0, 8, 8);
    g.strokeStyle = 'rgba(0,0,0,0.45)';
    g.fillStyle = 'rgba(0,0,0,0.45)';
    g.lineWidth = 1;
    const line = (x0, y0, x1, y1) => { g.beginPath(); g.moveTo(x0, y0); g.lineTo(x1, y1); g.stroke(); };
    switch (style.pattern) {
      case 'diagonal': line(0, 8, 8, 0); line(-1, 1, 1, -1); line(7, 9, 9, 7); break;
      case 'antidiagonal': line(0, 0, 8, 8); line(-1, 7, 1, 9); line(7, -1, 9, 1); break;
      case 'dots': g.fillRect(1, 1, 2, 2); g.fillRect(5, 5, 2, 2); break;
      case 'cross': line(0, 8, 8, 0); line(0, 0, 8, 8); break;
      case 'horizontal': line(0, 2.5, 8, 2.5); line(0, 6.5, 8, 6.5); break;
      case 'vertical': line(2.5, 0, 2.5, 8); line(6.5, 0, 6.5, 8); break;
      case 'grid': line(0, 3.5, 8, 3.5); line(3.5, 0, 3.5, 8); break;
      case 'sparse': g.fillRect(3, 3, 1, 1); break;
      default: break;
    }
    return c;
  }
  function styleOf(i) { return STYLES[i % STYLES.length]; }

  // ---- a device's data, decoded once
  function prepare(dev) {
    const stack = dev.series.filter(s => s.role === 'stack');
    const lines = dev.series.filter(s => s.role === 'line');
    const levels = dev.levels.map(l => {
      // "b": only the buckets listed are written (delta-coded indices);
      // one not listed repeats the bucket before it
      const idx = l.b ? undelta(l.b) : null;
      const full = (v, A) => {
        if (!idx) return v;
        const out = new A(l.count);
        for (let j = 0; j < idx.length; j++) {
          const end = j + 1 < idx.length ? idx[j + 1] : l.count;
          for (let i = idx[j]; i < end; i++) out[i] = v[j];
        }
        return out;
      };
      const num = a => full(undelta(a), Float64Array);
      const dec = o => { const r = {}; for (const k in o || {}) r[k] = num(o[k]); return r; };
      return {
        bucket_ns: l.bucket_ns, count: l.count, at: full(l.at, Array),
        top: num(l.top), low: num(l.low),
        stack: dec(l.stack), line_max: dec(l.line_max), line_min: dec(l.line_min),
        known_from: l.known_from || {},
      };
    }).sort((a, b) => a.bucket_ns - b.bucket_ns);
    const sy = dev.syncs && dev.syncs.b ? dev.syncs : { b: [], n: [], bucket_ns: 1 };
    const syncT = undelta(sy.b).map(b => b * sy.bucket_ns);
    return { dev, stack, lines, levels, syncT, syncN: sy.n };
  }
  function known(level, key, i) {
    const k = level.known_from[key];
    return k === undefined || (k !== null && i >= k);
  }

  // ---- nice ticks
  function byteTicks(max) {
    let step = 1;
    while (max / step > 6) step *= 2;
    let u = 0;
    while (u < 4 && step >= 2 ** (10 * (u + 1))) u++;
    const unit = u === 0 ? 'B' : UNITS[u - 1];
    const ticks = [];
    for (let v = 0; v <= max; v += step) ticks.push({ v, label: `${+(v / 2 ** (10 * u)).toFixed(3)} ${unit}` });
    return ticks;
  }
  function timeTicks(a, b) {
    const span = b - a;
    let step = 10 ** Math.floor(Math.log10(span / 6));
    for (const m of [1, 2, 5, 10]) if (span / (step * m) <= 8) { step *= m; break; }
    const digits = Math.max(0, Math.ceil(-Math.log10(step / 1e9)));
    const ticks = [];
    for (let t = Math.ceil(a / step) * step; t <= b; t += step) ticks.push({ t, label: (t / 1e9).toFixed(digits) });
    return ticks;
  }

  class Chart {
    constructor(fig, prep) {
      this.p = prep;
      this.dev = prep.dev;
      this.hidden = {};
      this.full = [0, Math.max(1, this.dev.duration_ns)];
      this.view = this.full.slice();
      this.toCapacity = false;
      this.build(fig);
    }

    build(fig) {
      const d = this.dev;
      const bar = el('div', { class: 'toolbar', role: 'toolbar', 'aria-label': `Zoom the chart of ${d.label}` });
      for (const [act, text] of [['in', 'Zoom in'], ['out', 'Zoom out'], ['left', '◀ Earlier'],
        ['right', 'Later ▶'], ['reset', 'Whole run']]) {
        const b = el('button', { type: 'button', 'data-act': act }, text);
        b.addEventListener('click', () => this.act(act));
        bar.append(b);
      }
      const cap = el('label', { class: 'capacity-toggle' });
      const box = el('input', { type: 'checkbox' });
      box.addEventListener('change', () => { this.toCapacity = box.checked; this.draw(); });
      cap.append(box, ' y axis up to the device total');
      bar.append(cap);
      this.rangeText = el('span', { class: 'range' });
      bar.append(this.rangeText);

      this.plot = el('div', {
        class: 'plot', tabindex: '0', role: 'group',
        'aria-label': `Memory over time, ${d.label}. Arrow keys move the cursor, + and - zoom, 0 shows the whole run.`,
      });
      this.canvas = el('canvas');
      this.overlay = el('div', { class: 'overlay' });
      this.cursor = el('div', { class: 'cursor', hidden: '' });
      this.select = el('div', { class: 'selection', hidden: '' });
      this.plot.append(this.canvas, this.overlay, this.cursor, this.select);

      this.legend = el('ul', { class: 'legend' });
      this.readout = el('div', { class: 'readout', role: 'status', 'aria-live': 'polite' },
        'Point at the chart (or focus it and use the arrow keys) to read every value at that time.');
      fig.append(bar, this.plot, this.legend, this.readout);
      this.buildLegend();
      this.bindInput();
    }

    buildLegend() {
      const swatch = (style, kind) => {
        const c = el('canvas', { width: '18', height: '12', class: 'swatch', 'aria-hidden': 'true' });
        const g = c.getContext('2d');
        if (kind === 'line') {
          g.strokeStyle = style.colour; g.lineWidth = 2; g.setLineDash(style.dash || []);
          g.beginPath(); g.moveTo(0, 6); g.lineTo(18, 6); g.stroke();
        } else {
          g.fillStyle = g.createPattern(patternTile(style), 'repeat');
          g.fillRect(0, 0, 18, 12);
          g.strokeStyle = '#333'; g.strokeRect(0.5, 0.5, 17, 11);
        }
        return c;
      };
      for (const s of [...this.p.stack].reverse().concat(this.p.lines)) {
        const li = el('li', { 'data-key': s.key });
        const label = el('label');
        const box = el('input', { type: 'checkbox', checked: '' });
        box.addEventListener('change', () => { this.hidden[s.key] = !box.checked; this.draw(); });
        label.append(box, swatch(styleOf(s.style), s.role), ` ${s.label}`);
        li.append(label);
        this.legend.append(li);
      }
      const fixed = [
        ['mark-low', 'lowest stack top within an interval (when it holds several instants)'],
        ['mark-total', 'device total (the capacity the device reported)'],
        ['mark-phase', 'phase occurrence: solid edge cold (the first), dashed edge warm'],
        ['mark-sync', 'synchronisation (tick under the axis)'],
        ['mark-peak', '▲ coinciding peak, with its composition'],
        ['mark-fail', '✕ failed allocation (links to its post-mortem)'],
      ];
      for (const [cls, text] of fixed) this.legend.append(el('li', { class: cls }, text));
    }

    bindInput() {
      const p = this.plot;
      let drag = null;
      p.addEventListener('mousemove', e => {
        const x = e.clientX - p.getBoundingClientRect().left - M.left;
        if (drag !== null) {
          const a = Math.min(drag, x), b = Math.max(drag, x);
          Object.assign(this.select.style, { left: `${M.left + a}px`, width: `${b - a}px` });
          this.select.hidden = false;
        }
        this.hover(x);
      });
      p.addEventListener('mouseleave', () => { this.cursor.hidden = true; });
      p.addEventListener('mousedown', e => {
        if (e.button !== 0 || e.target.closest('a')) return;
        drag = e.clientX - p.getBoundingClientRect().left - M.left;
        e.preventDefault();
      });
      window.addEventListener('mouseup', e => {
        if (drag === null) return;
        const x = e.clientX - p.getBoundingClientRect().left - M.left;
        const a = Math.min(drag, x), b = Math.max(drag, x);
        drag = null;
        this.select.hidden = true;
        if (b - a > 4) this.setView(this.timeAt(a), this.timeAt(b));
      });
      p.addEventListener('dblclick', () => this.act('reset'));
      p.addEventListener('wheel', e => {
        e.preventDefault();
        const x = e.clientX - p.getBoundingClientRect().left - M.left;
        this.zoom(Math.exp(e.deltaY * 0.0015), this.timeAt(x));
      }, { passive: false });
      p.addEventListener('keydown', e => {
        const keys = { '+': 'in', '=': 'in', '-': 'out', '0': 'reset' };
        if (keys[e.key]) { this.act(keys[e.key]); e.preventDefault(); return; }
        if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
          const spans = this.spans || [];
          if (!spans.length) return;
          let i = this.cursorSpan === undefined ? 0 : this.cursorSpan + (e.key === 'ArrowRight' ? 1 : -1);
          i = Math.max(0, Math.min(spans.length - 1, i));
          this.hover((spans[i].p0 + spans[i].p1) / 2);
          e.preventDefault();
        }
      });
    }

    act(what) {
      const [a, b] = this.view, w = b - a;
      if (what === 'in') this.zoom(0.5, (a + b) / 2);
      else if (what === 'out') this.zoom(2, (a + b) / 2);
      else if (what === 'left') this.setView(a - w / 2, b - w / 2);
      else if (what === 'right') this.setView(a + w / 2, b + w / 2);
      else if (what === 'reset') this.setView(this.full[0], this.full[1]);
    }
    zoom(f, at) {
      const [a, b] = this.view;
      this.setView(at - (at - a) * f, at + (b - at) * f);
    }
    setView(a, b) {
      const [fa, fb] = this.full;
      const minW = Math.max(100, this.p.levels.length ? this.p.levels[0].bucket_ns * 4 : 100);
      let w = Math.min(fb - fa, Math.max(minW, b - a));
      a = Math.max(fa, Math.min(a, fb - w));
      this.view = [a, a + w];
      this.draw();
    }
    // Viewport coordinates of the column that shows time t (ns), at the
    // height of bytes (or mid-height), and the plot area's page rectangle:
    // for keyboardless checks (tests) and nothing else.
    pointAt(t, bytes) {
      const k = Math.floor(t / this.L.bucket_ns);
      const sp = (this.spans || []).find(s => s.first <= k && k <= s.last);
      const r = this.plot.getBoundingClientRect();
      const x = sp ? (sp.p0 + sp.p1) / 2 : this.xAt(t);
      const y = bytes === undefined ? this.ph / 2 : this.ph - (bytes / this.ymax) * this.ph;
      return [r.left + M.left + x, r.top + M.top + y];
    }
    plotRect() {
      const r = this.plot.getBoundingClientRect();
      return { x: r.left + window.scrollX + M.left, y: r.top + window.scrollY + M.top, width: this.pw, height: this.ph };
    }
    timeAt(x) { const [a, b] = this.view; return a + (x / this.pw) * (b - a); }
    xAt(t) { const [a, b] = this.view; return ((t - a) / (b - a)) * this.pw; }

    // The coarsest level that still gives each pixel at most one bucket.
    chooseLevel() {
      const [a, b] = this.view, perPx = (b - a) / this.pw, ls = this.p.levels;
      let best = 0;
      for (let i = 0; i < ls.length; i++) if (ls[i].bucket_ns <= perPx) best = i;
      return best;
    }

    // Spans of pixels, each showing one bucket: the one with the highest
    // stack top among those under the pixel (its values are one instant's),
    // with the lowest low and the lines' extremes over all of them.
    computeSpans(L) {
      const [a, b] = this.view, bw = L.bucket_ns, scale = this.pw / (b - a);
      const i0 = Math.max(0, Math.floor(a / bw)), i1 = Math.min(L.count, Math.ceil(b / bw));
      const spans = [];
      const lineKeys = this.p.lines.map(s => s.key);
      if (bw * scale >= 1) {
        for (let i = i0; i < i1; i++) {
          const p0 = Math.max(0, Math.round((i * bw - a) * scale));
          const p1 = Math.min(this.pw, Math.round(((i + 1) * bw - a) * scale));
          if (p1 <= p0) continue;
          const lmax = {}, lmin = {};
          for (const k of lineKeys) { lmax[k] = L.line_max[k][i]; lmin[k] = L.line_min[k][i]; }
          spans.push({ p0, p1, i, first: i, last: i, low: L.low[i], lmax, lmin });
        }
        return spans;
      }
      for (let c = 0; c < this.pw; c++) {
        let j0 = Math.max(i0, Math.floor((a + c / scale) / bw));
        const j1 = Math.min(i1, Math.floor((a + (c + 1) / scale) / bw));
        if (j0 >= L.count) break;
        if (j1 <= j0) continue;
        let best = j0, low = L.low[j0];
        const lmax = {}, lmin = {};
        for (const k of lineKeys) { lmax[k] = L.line_max[k][j0]; lmin[k] = L.line_min[k][j0]; }
        for (let j = j0 + 1; j < j1; j++) {
          if (L.top[j] > L.top[best]) best = j;
          if (L.low[j] < low) low = L.low[j];
          for (const k of lineKeys) {
            if (L.line_max[k][j] > lmax[k]) lmax[k] = L.line_max[k][j];
            if (L.line_min[k][j] < lmin[k]) lmin[k] = L.line_min[k][j];
          }
        }
        spans.push({ p0: c, p1: c + 1, i: best, first: j0, last: j1 - 1, low, lmax, lmin });
        j0 = j1;
      }
      return spans;
    }

    draw() {
      const W = Math.max(320, this.plot.clientWidth || 800), H = HEIGHT;
      const dpr = window.devicePixelRatio || 1;
      this.canvas.width = Math.round(W * dpr);
      this.canvas.height = Math.round(H * dpr);
      this.canvas.style.width = `${W}px`;
      this.canvas.style.height = `${H}px`;
      this.pw = W - M.left - M.right;
      this.ph = H - M.top - M.bottom;
      const g = this.canvas.getContext('2d');
      g.setTransform(dpr, 0, 0, dpr, 0, 0);
      g.clearRect(0, 0, W, H);
      this.overlay.replaceChildren();
      if (!this.p.levels.length) { this.rangeText.textContent = 'no samples on this device'; return; }

      this.levelIndex = this.chooseLevel();
      const L = this.p.levels[this.levelIndex];
      this.L = L;
      const spans = this.spans = this.computeSpans(L);
      this.cursorSpan = undefined;

      const lines = this.p.lines.filter(s => !this.hidden[s.key]);
      let ymax = 0;
      for (const s of spans) {
        ymax = Math.max(ymax, L.top[s.i]);
        for (const l of lines) if (known(L, l.key, s.i)) ymax = Math.max(ymax, s.lmax[l.key]);
      }
      const total = this.dev.total_bytes;
      if (this.toCapacity && total) ymax = Math.max(ymax, total);
      ymax = ymax > 0 ? ymax * 1.05 : 1;
      this.ymax = ymax;
      const X = x => M.left + x, Y = v => M.top + this.ph - (v / ymax) * this.ph;

      g.save();
      g.beginPath(); g.rect(M.left, M.top, this.pw, this.ph); g.clip();
      this.drawPhases(g, X);
      // stacked layers, bottom first
      const base = new Float64Array(spans.length);
      for (const s of this.p.stack) {
        const vals = L.stack[s.key];
        g.fillStyle = g.createPattern(patternTile(styleOf(s.style)), 'repeat');
        for (let k = 0; k < spans.length; k++) {
          const sp = spans[k];
          const v = known(L, s.key, sp.i) ? vals[sp.i] : 0;
          if (this.hidden[s.key] || v <= 0) continue;
          const y0 = Y(base[k]), y1 = Y(base[k] + v);
          g.fillRect(X(sp.p0), y1, sp.p1 - sp.p0, y0 - y1);
          base[k] += v;
        }
      }
      // lowest top of the interval, where it differs from the top drawn
      g.strokeStyle = '#222'; g.lineWidth = 1; g.setLineDash([3, 2]);
      g.beginPath();
      for (const sp of spans) {
        if (sp.low >= L.top[sp.i]) continue;
        const y = Math.round(Y(sp.low)) + 0.5;
        g.moveTo(X(sp.p0), y); g.lineTo(X(sp.p1), y);
      }
      g.stroke();
      // line series: the maximum as a step line, the minimum below it
      for (const s of lines) {
        const st = styleOf(s.style);
        g.strokeStyle = st.colour; g.setLineDash(st.dash || []); g.lineWidth = 2;
        g.beginPath();
        let open = false;
        for (const sp of spans) {
          if (!known(L, s.key, sp.i)) { open = false; continue; }
          const y = Y(sp.lmax[s.key]);
          if (!open) g.moveTo(X(sp.p0), y); else g.lineTo(X(sp.p0), y);
          g.lineTo(X(sp.p1), y);
          open = true;
        }
        g.stroke();
        g.lineWidth = 1;
        g.beginPath();
        for (const sp of spans) {
          if (!known(L, s.key, sp.i) || sp.lmin[s.key] >= sp.lmax[s.key]) continue;
          const y0 = Y(sp.lmax[s.key]), y1 = Y(sp.lmin[s.key]);
          const x = X((sp.p0 + sp.p1) / 2);
          g.moveTo(x, y0); g.lineTo(x, y1);
        }
        g.stroke();
      }
      g.setLineDash([]);
      if (total && total <= ymax) {
        g.strokeStyle = '#b00'; g.lineWidth = 1.5; g.setLineDash([10, 4]);
        g.beginPath(); g.moveTo(M.left, Y(total)); g.lineTo(M.left + this.pw, Y(total)); g.stroke();
        g.setLineDash([]);
      }
      this.drawFailureLines(g, X);
      g.restore();
      this.drawSyncs(g, X);
      this.drawAxes(g, Y);
      this.drawMarks(Y);
      const [a, b] = this.view;
      this.rangeText.textContent = `showing ${fmtSeconds(a, 6)} to ${fmtSeconds(b, 6)} ` +
        `(one bucket: ${L.bucket_ns} ns${this.levelIndex === 0 && L.bucket_ns > (b - a) / this.pw ? ', the finest precomputed' : ''})`;
    }

    visible(list, key) {
      const [a, b] = this.view;
      return (list || []).filter(m => m[key] >= a && m[key] <= b);
    }
    drawPhases(g, X) {
      const [a, b] = this.view;
      for (const ph of this.dev.phases || []) {
        const end = ph.end_ns === null ? this.full[1] : ph.end_ns;
        if (end < a || ph.begin_ns > b) continue;
        const x0 = Math.max(0, this.xAt(ph.begin_ns)), x1 = Math.min(this.pw, this.xAt(end));
        g.fillStyle = ph.cold ? 'rgba(120,120,120,0.10)' : 'rgba(120,120,120,0.05)';
        g.fillRect(X(x0), M.top, Math.max(1, x1 - x0), this.ph);
        g.strokeStyle = ph.failed ? '#b00' : '#666';
        g.setLineDash(ph.cold ? [] : [4, 3]);
        g.lineWidth = 1;
        g.strokeRect(X(x0) + 0.5, M.top + 0.5, Math.max(1, x1 - x0) - 1, this.ph - 1);
        g.setLineDash([]);
      }
    }
    drawFailureLines(g, X) {
      g.strokeStyle = '#b00'; g.lineWidth = 1; g.setLineDash([2, 2]);
      g.beginPath();
      for (const f of this.visible(this.dev.failures, 't_ns')) {
        const x = Math.round(X(this.xAt(f.t_ns))) + 0.5;
        g.moveTo(x, M.top); g.lineTo(x, M.top + this.ph);
      }
      g.stroke(); g.setLineDash([]);
    }
    drawSyncs(g, X) {
      const ts = this.p.syncT;
      g.strokeStyle = '#333'; g.lineWidth = 1;
      g.beginPath();
      for (let k = 0; k < ts.length; k++) {
        const t = ts[k];
        if (t < this.view[0] || t > this.view[1]) continue;
        const x = Math.round(X(this.xAt(t))) + 0.5;
        g.moveTo(x, M.top + this.ph + 1); g.lineTo(x, M.top + this.ph + 6);
      }
      g.stroke();
    }
    drawAxes(g, Y) {
      g.fillStyle = '#222'; g.strokeStyle = '#999'; g.lineWidth = 1;
      g.font = '12px "DejaVu Sans", "Liberation Sans", Arial, sans-serif';
      g.textAlign = 'right'; g.textBaseline = 'middle';
      for (const t of byteTicks(this.ymax)) {
        const y = Math.round(Y(t.v)) + 0.5;
        g.beginPath(); g.moveTo(M.left - 4, y); g.lineTo(M.left + this.pw, y);
        g.strokeStyle = t.v === 0 ? '#555' : '#e4e4e4'; g.stroke();
        g.fillText(t.label, M.left - 6, y);
      }
      g.textAlign = 'center'; g.textBaseline = 'top';
      const [a, b] = this.view;
      for (const t of timeTicks(a, b)) {
        const x = Math.round(M.left + this.xAt(t.t)) + 0.5;
        g.strokeStyle = '#555';
        g.beginPath(); g.moveTo(x, M.top + this.ph); g.lineTo(x, M.top + this.ph + 4); g.stroke();
        g.fillText(t.label, x, M.top + this.ph + 8);
      }
      g.fillText('time since the first event, seconds (wall-clock time on hover)', M.left + this.pw / 2, M.top + this.ph + 26);
      g.save();
      g.translate(14, M.top + this.ph / 2); g.rotate(-Math.PI / 2);
      g.textBaseline = 'middle';
      g.fillText('device memory (binary units: KiB, MiB, GiB)', 0, 0);
      g.restore();
    }

    // Phase names, peaks and failures as elements: text a reader, a screen
    // reader and a test can read, each linked to its table row.
    drawMarks(Y) {
      const add = (cls, x, y, text, href, title, bytes) => {
        const a = el(href ? 'a' : 'span', { class: `mark ${cls}` });
        if (href) a.setAttribute('href', href);
        if (title) a.setAttribute('title', title);
        a.style.left = `${M.left + x}px`;
        if (x > this.pw - 260) a.classList.add('flip');
        a.style.top = `${y}px`;
        const lab = el('span', { class: 'lab' }, text);
        if (bytes !== undefined) lab.setAttribute('data-bytes', String(bytes));
        a.append(lab);
        this.overlay.append(a);
        return a;
      };
      const [va, vb] = this.view;
      let n = 0;
      for (const ph of this.dev.phases || []) {
        const end = ph.end_ns === null ? this.full[1] : ph.end_ns;
        if (end < va || ph.begin_ns > vb) continue;
        const x0 = Math.max(0, this.xAt(ph.begin_ns)), x1 = Math.min(this.pw, this.xAt(end));
        if (x1 - x0 < 48 || ++n > 300) continue;
        const state = `${ph.cold ? 'cold' : 'warm'}${ph.failed ? ', failed' : ''}${ph.end_ns === null ? ', not ended' : ''}`;
        const m = add('phase', x0 + 3, 4, `${ph.name} #${ph.occurrence} (${state})`, ph.href);
        m.style.maxWidth = `${x1 - x0 - 6}px`;
      }
      const total = this.dev.total_bytes;
      if (total) {
        const on = total <= this.ymax;
        add('total', this.pw - 4, on ? Y(total) - 16 : M.top - 26,
          `device total ${fmtBytes(total)}${on ? '' : ' (above this scale)'}`, null, null, total);
      }
      for (const pk of this.visible(this.dev.peaks, 't_ns').slice(0, 200)) {
        const parts = (pk.parts || []).map(p => `${p.label}: ${fmtBytes(p.bytes)}`).join('\n');
        const m = add('peak', this.xAt(pk.t_ns), Math.max(M.top, Y(pk.bytes)) - 18,
          `▲ ${pk.label} ${fmtBytes(pk.bytes)}`, pk.href, `${pk.label} at ${fmtSeconds(pk.t_ns)}\n${parts}`, pk.bytes);
        const ul = el('ul', { class: 'parts' });
        for (const p of pk.parts || []) {
          const li = el('li', {}, `${p.label}: ${fmtBytes(p.bytes)}`);
          li.setAttribute('data-bytes', String(p.bytes));
          ul.append(li);
        }
        m.append(ul);
      }
      const fails = this.visible(this.dev.failures, 't_ns');
      for (const f of fails.slice(0, 200))
        add('fail', this.xAt(f.t_ns), M.top + this.ph - 20, `✕ ${f.label} ${fmtBytes(f.bytes)}`, f.href,
          `${f.label} at ${fmtSeconds(f.t_ns)}`, f.bytes);
      if (fails.length > 200)
        add('fail more', this.pw - 4, M.top + this.ph - 40, `+${fails.length - 200} more failures in this range (table below)`);
    }

    hover(x) {
      const spans = this.spans || [];
      if (!spans.length || x < 0 || x >= this.pw) { this.cursor.hidden = true; return; }
      let lo = 0, hi = spans.length - 1;
      while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (spans[mid].p0 <= x) lo = mid; else hi = mid - 1; }
      const sp = spans[lo];
      this.cursorSpan = lo;
      Object.assign(this.cursor.style, { left: `${M.left + sp.p0}px`, width: `${Math.max(1, sp.p1 - sp.p0)}px` });
      this.cursor.hidden = false;
      this.showReadout(sp);
    }

    showReadout(sp) {
      const L = this.L, i = sp.i, bw = L.bucket_ns;
      const t0 = sp.first * bw, t1 = Math.min((sp.last + 1) * bw, this.full[1]);
      const box = el('div');
      const at = L.at[i];
      const head = el('p', { class: 'when' });
      if (at >= 0) {
        const t = i * bw + at, wall = fmtWall(this.dev.wall_t0, t);
        head.textContent = `At ${fmtSeconds(t)}${wall ? ` (${wall})` : ''}: the highest stack top ` +
          `between ${fmtSeconds(t0, 6)} and ${fmtSeconds(t1, 6)}.`;
      } else {
        head.textContent = `Between ${fmtSeconds(t0, 6)} and ${fmtSeconds(t1, 6)}: the highest stack top is the one held ` +
          'since before this interval began.';
      }
      box.append(head);
      const tbl = el('table', { class: 'values' });
      const row = (key, label, v, isKnown, extra) => {
        const tr = el('tr', { 'data-key': key });
        tr.append(el('th', { scope: 'row' }, label));
        const td = el('td', {}, isKnown ? fmtBytes(v) + (extra || '') : 'n/a (not known yet)');
        if (isKnown) td.setAttribute('data-bytes', String(v));
        tr.append(td);
        tbl.append(tr);
      };
      for (const s of [...this.p.stack].reverse()) row(s.key, s.label, L.stack[s.key][i], known(L, s.key, i));
      row('top', this.dev.top_label || 'stack top', L.top[i], true);
      if (sp.low < L.top[i]) row('low', 'lowest stack top in this interval', sp.low, true);
      for (const s of this.p.lines) {
        const k = known(L, s.key, i);
        const mn = sp.lmin[s.key], mx = sp.lmax[s.key];
        row(s.key, s.label, mx, k, mn < mx ? `; lowest in this interval ${fmtBytes(mn)}` : '');
      }
      if (this.dev.total_bytes) row('total', 'device total', this.dev.total_bytes, true);
      box.append(tbl);
      const notes = [];
      const tq = at >= 0 ? i * bw + at : t0;
      for (const ph of this.dev.phases || []) {
        const end = ph.end_ns === null ? this.full[1] : ph.end_ns;
        if (ph.begin_ns <= tq && tq <= end) notes.push(`in phase ${ph.name} #${ph.occurrence} (${ph.cold ? 'cold' : 'warm'})`);
      }
      const inRange = (list, key) => (list || []).filter(m => m[key] >= t0 && m[key] < t1);
      for (const f of inRange(this.dev.failures, 't_ns')) notes.push(`${f.label} of ${fmtBytes(f.bytes)} at ${fmtSeconds(f.t_ns)}`);
      for (const pk of inRange(this.dev.peaks, 't_ns')) notes.push(`${pk.label} ${fmtBytes(pk.bytes)} at ${fmtSeconds(pk.t_ns)}`);
      let count = 0;
      for (let k = 0; k < this.p.syncT.length; k++) {
        const t = this.p.syncT[k];
        if (t >= t0 && t < t1) count += this.p.syncN[k];
      }
      if (count) notes.push(`${count} synchronisation${count > 1 ? 's' : ''} in this interval`);
      if (notes.length) {
        const ul = el('ul', { class: 'notes' });
        for (const n of notes) ul.append(el('li', {}, n));
        box.append(ul);
      }
      this.readout.replaceChildren(box);
    }
  }

  function main() {
    const node = document.getElementById('gmt-data');
    if (!node) return;
    const data = JSON.parse(node.textContent);
    const parsed = performance.now();
    const charts = [];
    document.documentElement.classList.add('js');
    for (const dev of data.devices || []) {
      const fig = document.querySelector(`figure.chart[data-device="${dev.id}"]`);
      if (!fig) continue;
      const c = new Chart(fig, prepare(dev));
      c.draw();
      charts.push(c);
    }
    let pending = false;
    const redraw = () => {
      if (pending) return;
      pending = true;
      requestAnimationFrame(() => { pending = false; for (const c of charts) c.draw(); });
    };
    window.addEventListener('resize', redraw);
    window.addEventListener('beforeprint', () => { for (const c of charts) c.draw(); });
    window.gmtReport = {
      charts,
      parseMs: parsed - started,
      drawMs: performance.now() - started,
      ready: true,
      fmtBytes,
    };
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', main);
  else main();
})();
