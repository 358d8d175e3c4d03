// The companion page: the video, its captions, and every matrix of the trace as a grid
// whose cells open to show how they were made. Every number shown is read from the trace
// (the part of it the page draws, at the precision it writes: #trace, made by
// pipeline.outputs.page.page_trace); the page only multiplies and adds the numbers it
// writes, to say "=" where they make the result as written and "≈" where the result was
// made from the unrounded numbers. Plain script, no framework, nothing fetched.
"use strict";

// A matrix as the page keeps it ({part: shape, keep: kept indices per axis (null: all),
// decimals: its precision, units: the kept entries in whole units of their last place})
// as an array indexed as the whole one, sparse where entries were left out; anything else
// as it is.
function unpack(x) {
  if (Array.isArray(x)) return x.map(unpack);
  if (x === null || typeof x !== "object") return x;
  if (!("part" in x)) { for (const k of Object.keys(x)) x[k] = unpack(x[k]); return x; }
  const fill = (values, axis) => {
    const out = new Array(x.part[axis]);
    (x.keep[axis] || [...out.keys()]).forEach((n, k) => {
      out[n] = axis + 1 < x.part.length ? fill(values[k], axis + 1) : values[k] / 10 ** x.decimals;
    });
    return out;
  };
  return fill(x.units, 0);
}

const T = unpack(JSON.parse(document.getElementById("trace").textContent));
const D = JSON.parse(document.getElementById("page-data").textContent);
const W = D.words;
const MAX_SHOWN = D.max_shown; // a wider matrix shows its first columns, "…" and its last
const MAX_TERMS = D.max_terms; // a longer sum shows its first terms, the rest summed, its last
const reduceMotion = window.matchMedia("(prefers-reduced-motion: reduce)").matches;

const state = {
  head: T.head_index,
  focus: T.focus,
  theme: D.theme,
  chapter: null, // the chapter of the caption playing
  open: null, // the open cell: {key, i, j}
  opener: null, // the grid cell that opened it (Escape returns there)
  presenter: false,
  predict: false, // predict first: the cells that answer a question are withheld (setPredict)
};

// ---- words and numbers ------------------------------------------------------------------
function say(key, values) {
  let s = W[key];
  for (const [k, v] of Object.entries(values || {})) s = s.split("{" + k + "}").join(String(v));
  return s;
}

function fmt(v, decimals = 2) {
  let s = v.toFixed(decimals);
  if (Number(s) === 0) s = s.replace("-", "");
  return s.replace("-", "−");
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") e.append(typeset(String(v)));
    else if (k === "class") e.className = v;
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) {
    if (c !== null && c !== undefined) e.append(typeof c === "string" ? typeset(c) : c);
  }
  return e;
}

// Plain-text maths written as the video draws it (scenes.text.typeset): a subscript after a
// one-letter name ("d_k", "W_Q", "Q_rot") and a superscript ("K^T", "base^(−2m/d_k)") in
// Unicode's small characters where it has one for each (dₖ, Kᵀ, Qᵣₒₜ), else in <sub> or
// <sup> (W with a lowered Q). A word such as "snake_case" stays as it is written.
const SMALL = {
  sub: Object.fromEntries([..."0123456789aehijklmnoprstuvx+−=()"].map(
    (c, n) => [c, [..."₀₁₂₃₄₅₆₇₈₉ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ₊₋₌₍₎"][n]])),
  sup: Object.fromEntries([..."0123456789abcdefghijklmnoprstuvwxyzT+−=()/"].map(
    (c, n) => [c, [..."⁰¹²³⁴⁵⁶⁷⁸⁹ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᵀ⁺⁻⁼⁽⁾ᐟ"][n]])),
};
const MATH = /(?<!\p{L})([A-Za-z])_([A-Za-z0-9]+)|\^(?:\(([^()]*)\)|([A-Za-z0-9]+))/gu;

function typeset(text) {
  if (!text.includes("_") && !text.includes("^")) return text;
  const out = document.createDocumentFragment();
  let at = 0;
  for (const m of text.matchAll(MATH)) {
    const tag = m[1] ? "sub" : "sup", chars = m[1] ? m[2] : (m[3] ?? m[4]);
    out.append(text.slice(at, m.index) + (m[1] || ""));
    if ([...chars].every(c => c in SMALL[tag])) out.append([...chars].map(c => SMALL[tag][c]).join(""));
    else out.append(el(tag, {text: chars}));
    at = m.index + m[0].length;
  }
  out.append(text.slice(at));
  return out;
}

// How many decimals the page writes a quantity with (its name in the trace, or rest_ and
// its name), as the video does (T.decimals, from scenes.precision): the weights, the exps
// and their sums 3, every other quantity 2.
const places = name => T.decimals[name] ?? T.decimals.other;

// A number read from the trace: `name` and `index` say where, data-v holds it exactly.
function num(v, name, index, cls) {
  const neg = v < 0, text = fmt(v, places(name));
  return el("span", {class: "num " + (cls || ""), "data-name": name, "data-index": index.join(","),
                     "data-v": String(v), text: neg && cls === "op" ? "(" + text + ")" : text});
}
const op = (v, name, index) => num(v, name, index, "op");
const result = (v, name, index) => num(v, name, index, "result");

// Each number the page writes has its quantity's decimals (places), so sums of products
// of them are exact in whole units of a last place: a number as written is {n, p}, n whole
// units of 10^−p (0.457 of a weight: {n: 457, p: 3}); a weight × V product is in 10⁻⁵.
const written = (v, name) => ({n: Math.round(v * 10 ** places(name)), p: places(name)});
const times = (a, b) => ({n: a.n * b.n, p: a.p + b.p});
function plus(a, b, sign = 1) {
  const p = Math.max(a.p, b.p);
  return {n: a.n * 10 ** (p - a.p) + sign * b.n * 10 ** (p - b.p), p};
}
const total = terms => terms.reduce((a, b) => plus(a, b), {n: 0, p: 0});
// Whether a made value (exact as written, {n, p}, or a plain number) is within half a unit
// of the last place of the result as written (`res`, a quantity `name`; a tie rounds
// either way): "=", else "≈" (the result was made from the unrounded numbers).
function relation(made, res, name) {
  const d = places(name);
  let same;
  if (typeof made === "number") same = Math.abs(made - res) <= 0.5 * 10 ** -d + 1e-9;
  else {
    const p = Math.max(made.p, d);
    same = 2 * Math.abs(made.n * 10 ** (p - made.p) - written(res, name).n * 10 ** (p - d)) <= 10 ** (p - d);
  }
  return el("span", {class: "rel", text: same ? " = " : " ≈ "});
}
// The arithmetic of a formula, in one element (a test reads it back and redoes it).
const expr = (...parts) => el("span", {class: "expr"}, ...parts);

// ---- colours: the video's, as WCAG contrast rules pick ink ------------------------------
function rgb(c) { return [1, 3, 5].map(i => parseInt(c.slice(i, i + 2), 16)); }
function hex(a) { return "#" + a.map(x => Math.round(Math.min(255, Math.max(0, x))).toString(16).padStart(2, "0")).join(""); }
function luminance(c) {
  const [r, g, b] = rgb(c).map(x => x / 255).map(x => x <= 0.04045 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
function contrast(a, b) {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}
function blend(top, under, alpha) {
  const a = rgb(top), b = rgb(under);
  return hex(a.map((x, k) => alpha * x + (1 - alpha) * b[k]));
}
function palette() { return D.colours[state.theme].palette; }
function inTheme(theme, make) { // what `make` builds, drawn in `theme`'s colours
  const was = state.theme;
  state.theme = theme;
  try { return make(); } finally { state.theme = was; }
}
function inkOn(fill) { // the theme's text, or its background, whichever reads on `fill`
  const p = palette();
  if (contrast(p.text, fill) >= 4.5) return p.text;
  if (contrast(p.background, fill) >= 4.5) return p.background;
  return contrast("#000000", fill) > contrast("#ffffff", fill) ? "#000000" : "#ffffff";
}
function readable(colour) { // a colour darkened or lightened until it reads on the background
  const p = palette();
  let c = colour;
  for (let k = 0; k < 20 && contrast(c, p.background) < 4.5; k++) c = blend(p.text, c, 0.15);
  return c;
}
// The light theme's colours as --light-* too: the printed handout is drawn in them.
function printColours() {
  inTheme("light", () => {
    const root = document.documentElement.style, p = palette();
    for (const [k, v] of Object.entries(p)) root.setProperty("--light-" + k, v);
    root.setProperty("--light-positive-ink", readable(p.positive));
    root.setProperty("--light-negative-ink", readable(p.negative));
  });
}
function applyTheme() {
  const p = palette();
  document.documentElement.dataset.theme = state.theme;
  for (const [k, v] of Object.entries(p)) document.documentElement.style.setProperty("--" + k, v);
  document.documentElement.style.setProperty("--positive-ink", readable(p.positive));
  document.documentElement.style.setProperty("--negative-ink", readable(p.negative));
  for (const b of document.querySelectorAll("[data-theme-choice]"))
    b.setAttribute("aria-pressed", String(b.dataset.themeChoice === state.theme));
}

// ---- the matrices -----------------------------------------------------------------------
const head = () => T.heads[state.head];
// With RoPE (T.rope), Q and K are X·W_Q and X·W_K, kept before their turn; the turned rows
// the scores use (the trace's heads[h].Q and .K) are Q_rot and K_rot.
const rotary = () => T.rope !== null && T.rope !== undefined;
const kvHead = h => T.kv_heads ? T.kv_heads[h] : h;
const qRows = () => rotary() ? T.rope.Q_before[state.head] : head().Q;
const kRows = () => rotary() ? T.rope.K_before[kvHead(state.head)] : head().K;
const qWords = () => T.query_tokens.map(t => t.text);
const kWords = () => T.key_tokens.map(t => t.text);
const dims = n => Array.from({length: n}, (_, m) => String(m + 1));

// Each grid: its key (the trace's name), its rows and columns ("q" query words, "k" key
// words, "d" dimensions), where its numbers are, and its colour (the video's).
function matrices() {
  const h = head();
  const out = [{key: "X", rows: "k", cols: "d", values: T.X, colour: "text"}];
  if (T.cross) out.push({key: "X_q", rows: "q", cols: "d", values: T.X_q, colour: "text"});
  out.push(
    {key: "W_Q", rows: "d", cols: "d", values: h.W_Q, colour: "q"},
    {key: "W_K", rows: "d", cols: "d", values: h.W_K, colour: "k"},
    {key: "W_V", rows: "d", cols: "d", values: h.W_V, colour: "v"},
    {key: "Q", rows: "q", cols: "d", values: qRows(), colour: "q"},
    {key: "K", rows: "k", cols: "d", values: kRows(), colour: "k"},
    {key: "V", rows: "k", cols: "d", values: h.V, colour: "v"});
  if (rotary()) out.push(
    {key: "Q_rot", rows: "q", cols: "d", values: h.Q, colour: "q"},
    {key: "K_rot", rows: "k", cols: "d", values: h.K, colour: "k"});
  out.push(
    {key: "scores", rows: "q", cols: "k", values: h.scores, colour: "q"},
    {key: "scaled", rows: "q", cols: "k", values: h.scaled, colour: "q"},
    {key: "weights", rows: "q", cols: "k", values: h.weights, colour: "w"},
    {key: "Z", rows: "q", cols: "d", values: h.Z, colour: "z"});
  return out;
}

function labels(kind, n) {
  return kind === "q" ? qWords() : kind === "k" ? kWords() : dims(n);
}
function wordColour(kind, i) {
  const c = D.colours[state.theme];
  return kind === "q" ? c.queries[i] : kind === "k" ? c.keys[i] : null;
}

// The indices drawn of n: all of them, or the first ones, null (the "…") and the last.
function shown(n) {
  if (n <= MAX_SHOWN) return [...Array(n).keys()];
  return [...Array(MAX_SHOWN - 2).keys(), null, n - 1];
}

function title(key) {
  if (key === "weights" && !T.normalized) return W.weights_raw;
  if (rotary() && (key === "scores" || key === "scaled")) return W[key + "_rot"];
  return W[key];
}

function masked(key, i, j) {
  return ["scores", "scaled", "weights"].includes(key) && !head().mask[i][j];
}

function renderGrid(m, prefix = "h-") {
  const rows = m.values.length, cols = rows ? m.values[0].length : 0;
  const rowNames = labels(m.rows, rows), colNames = labels(m.cols, cols);
  const h = el("h3", {id: prefix + m.key, text: title(m.key)});
  const table = el("table", {role: "grid", class: "matrix", "aria-labelledby": prefix + m.key, "data-key": m.key});
  const top = el("tr", {role: "row"}, el("th", {role: "columnheader", scope: "col", class: "word",
                                               text: m.rows === "d" ? W.dimensions : W.word}));
  for (const j of shown(cols)) {
    if (j === null) { top.append(el("th", {role: "columnheader", class: "ellipsis", text: "…"})); continue; }
    const th = el("th", {role: "columnheader", scope: "col", text: colNames[j],
                         class: m.cols === "d" ? null : "word",
                         "aria-label": m.cols === "d" ? say("dimension", {m: j + 1}) : null});
    const wc = wordColour(m.cols, j);
    if (wc) th.style.color = wc;
    top.append(th);
  }
  table.append(el("thead", {}, top));
  const body = el("tbody");
  let max = 0; // over the numbers the page keeps (a sparse array skips the rest)
  m.values.forEach(row => row.forEach(v => { max = Math.max(max, Math.abs(v)); }));
  const p = palette();
  for (const i of shown(rows)) {
    if (i === null) {
      const tr = el("tr", {role: "row"}, el("th", {role: "rowheader", class: "ellipsis", text: "…"}));
      for (const j of shown(cols)) tr.append(el("td", {role: "gridcell", class: "ellipsis", text: "…", "data-skip": "1"}));
      body.append(tr);
      continue;
    }
    const followed = (m.rows === "q" && i === state.focus) || (m.rows === "k" && !T.cross && m.key === "X" && i === state.focus);
    const tr = el("tr", {role: "row", class: followed ? "followed" : null});
    const rh = el("th", {role: "rowheader", scope: "row", class: m.rows === "d" ? null : "word",
                         text: rowNames[i], "aria-label": m.rows === "d" ? say("dimension", {m: i + 1}) :
                           (followed ? rowNames[i] + ", " + W.followed : null)});
    const wc = wordColour(m.rows, i);
    if (wc) rh.style.color = wc;
    tr.append(rh);
    for (const j of shown(cols)) {
      if (j === null) { tr.append(el("td", {role: "gridcell", class: "ellipsis", text: "…", "data-skip": "1"})); continue; }
      const v = m.values[i][j];
      const hidden = masked(m.key, i, j);
      const held = withheld(m.key, i, j);
      const td = el("td", {role: "gridcell", tabindex: "-1", "data-key": m.key, "data-i": i,
                           "data-j": j, "data-v": held ? null : String(v),
                           class: held ? "withheld" : null, "aria-label": held ? W.withheld : null,
                           text: held ? "?" : hidden ? W.masked_short : fmt(v, places(m.key))});
      const tint = m.key === "weights" && T.normalized ? p.w : v >= 0 ? p.positive : p.negative;
      const alpha = hidden || max === 0 ? 0 : 0.5 * Math.abs(v) / max;
      const fill = blend(tint, p.background, alpha);
      td.style.background = fill;
      td.style.color = inkOn(fill);
      tr.append(td);
    }
    body.append(tr);
  }
  table.append(body);
  const first = table.querySelector("td[tabindex]");
  if (first) first.tabIndex = 0;
  const box = el("div", {class: "grid-box", "data-key": m.key}, h, table);
  box.style.borderInlineStart = "4px solid " + (m.colour === "text" ? p.grid : p[m.colour]);
  box.style.paddingInlineStart = "0.6rem";
  return box;
}

function renderGrids() {
  const grids = document.getElementById("grids");
  grids.replaceChildren(...matrices().map(m => renderGrid(m)));
  markNow();
  if (state.open) {
    const c = state.open;
    const td = grids.querySelector(`td[data-key="${c.key}"][data-i="${c.i}"][data-j="${c.j}"]`);
    if (td) openCell(td, false);
  }
  handoutLater();
}

// ---- keyboard: each grid is an ARIA grid, one tab stop, arrows move --------------------
function cellsOf(table) {
  return [...table.querySelectorAll("tbody tr")].map(tr => [...tr.querySelectorAll("td")]);
}
function onGridKey(ev) {
  const td = ev.target.closest("td[role=gridcell]");
  if (!td) return;
  const table = td.closest("table");
  const cells = cellsOf(table);
  let r = cells.findIndex(row => row.includes(td)), c = cells[r].indexOf(td);
  const step = (dr, dc) => { // skip the "…" cells
    let nr = r + dr, nc = c + dc;
    while (cells[nr] && cells[nr][nc] && cells[nr][nc].dataset.skip) { nr += dr; nc += dc; }
    if (cells[nr] && cells[nr][nc]) { r = nr; c = nc; }
  };
  const last = row => row.length - 1;
  switch (ev.key) {
    case "ArrowRight": step(0, 1); break;
    case "ArrowLeft": step(0, -1); break;
    case "ArrowDown": step(1, 0); break;
    case "ArrowUp": step(-1, 0); break;
    case "Home": if (ev.ctrlKey) r = 0; c = 0; break;
    case "End": if (ev.ctrlKey) r = cells.length - 1; c = last(cells[r]); break;
    case "Enter": case " ": openCell(td, true); ev.preventDefault(); return;
    default: return;
  }
  ev.preventDefault();
  const next = cells[r][c];
  if (next && !next.dataset.skip) {
    table.querySelectorAll("td[tabindex='0']").forEach(x => { x.tabIndex = -1; });
    next.tabIndex = 0;
    next.focus();
  }
}

// ---- how a cell was made ----------------------------------------------------------------
function named(key, i, j) {
  const m = matrices().find(x => x.key === key);
  const r = labels(m.rows, m.values.length)[i];
  const c = labels(m.cols, m.values[0].length)[j];
  return `${key}[${r}, ${c}]`;
}

// A sum of products Σ a_m·b_m (+ a bias) = result, each term coloured by its sign and told
// in words. A long sum writes its first terms, the sum of the middle ones as one number
// (`rest`: [value, name, index], given by the page's data) and its last.
function sumOfProducts(pairs, res, signs, rest, bias) {
  const n = pairs.length;
  const p = el("p", {class: "formula"}), e = expr();
  const shownTerms = n <= MAX_TERMS ? [...Array(n).keys()] : [...Array(MAX_TERMS - 1).keys(), null, n - 1];
  const terms = []; // as written, exact
  shownTerms.forEach((m, k) => {
    if (k > 0) e.append(" + ");
    if (m === null) {
      e.append(el("span", {class: "aside", text: say("more_terms", {n: n - MAX_TERMS}) + " "}), op(...rest));
      terms.push(written(rest[0], rest[1]));
      return;
    }
    const [a, b] = pairs[m];
    const prod = a[0] * b[0];
    terms.push(times(written(a[0], a[1]), written(b[0], b[1])));
    const kind = !signs ? "" : prod > 0 ? "agree" : prod < 0 ? "differ" : "zero";
    const term = el("span", {class: "term " + kind, "data-product": String(prod)}, op(...a), "·", op(...b));
    if (signs) term.append(el("span", {class: "sign", text: kind === "agree" ? " ✓" : kind === "differ" ? " ✗" : " ·",
                                       title: W[kind], "aria-label": W[kind]}));
    e.append(term);
  });
  if (bias) { e.append(" + ", op(...bias)); terms.push(written(bias[0], bias[1])); }
  p.append(e, relation(total(terms), Number(res.dataset.v), res.dataset.name), res);
  return p;
}

function detailX(key, i, j) {
  const q = key === "X_q";
  const [E, P, X] = q ? ["E_q", "P_q", "X_q"] : ["E", "P", "X"];
  const out = [el("p", {class: "formula"}, `${named(key, i, j)} = `)];
  if (q && T.query_inputs) {
    out[0].append(result(T[X][i][j], X, [i, j]));
    out.push(el("p", {text: T.x_label_q || ""}));
  } else if (xIsTheSum() && T.positional) {
    const made = plus(written(T[E][i][j], E), written(T[P][i][j], P));
    out[0].append(expr(op(T[E][i][j], E, [i, j]), " + ", op(T[P][i][j], P, [i, j])),
                  relation(made, T[X][i][j], X), result(T[X][i][j], X, [i, j]));
    out.push(el("p", {text: W.x_sum}));
  } else if (xIsTheSum()) {
    out[0].append(expr(op(T[E][i][j], E, [i, j])), relation(written(T[E][i][j], E), T[X][i][j], X),
                  result(T[X][i][j], X, [i, j]));
    out.push(el("p", {text: W.x_plain}));
  } else {  // a normalised sum, a hidden state or an encoder's output: what it is, in words
    out[0].append(result(T[X][i][j], X, [i, j]));
    out.push(el("p", {text: xMadeOf()}));
  }
  return out;
}

function xIsTheSum() { // X = E + P (or E) as it stands: the first layer's unnormalised input
  return (T.x_from || "embedding") === "embedding" && (T.x_label === "E + P" || T.x_label === "E");
}

function xMadeOf() { // attncore.trace's x_from, worded
  const below = T.layer - 1;
  if (T.x_from === "hidden") return say("x_hidden", {layer: T.layer, below});
  if (T.x_from === "normed_hidden") return say("x_normed_hidden", {layer: T.layer, below});
  if (T.x_from === "encoder") return say("x_encoder");
  return say(T.positional ? "x_norm" : "x_norm_plain", {formula: T.x_label});
}

function detailWeight(key, i, j) {
  return [el("p", {class: "formula"}, `${named(key, i, j)} = `, result(head()[key][i][j], key, [i, j])),
          el("p", {text: T.source === "random" ? W.random : W.learned})];
}

function detailProjection(key, i, c) { // Q, K or V: Σ_m X[i,m]·W[m,c] (+ b[c])
  const h = head(), X = key === "Q" ? "X_q" : "X", Wn = "W_" + key, b = "b_" + key;
  const pairs = T[X][i].map((x, m) => [[x, X, [i, m]], [h[Wn][m][c], Wn, [m, c]]]);
  const made = key === "Q" ? qRows() : key === "K" ? kRows() : h[key]; // before any turn
  const biased = h[b].some(x => x !== 0);
  const p = sumOfProducts(pairs, result(made[i][c], key, [i, c]), false,
                          [h.rest[key][i][c], "rest_" + key, [i, c]], biased ? [h[b][c], b, [c]] : null);
  p.prepend(`${named(key, i, c)} = `);
  return biased ? [p, el("p", {text: W.bias})] : [p];
}

// Q_rot or K_rot (RoPE): pair m of the row, entries 2m and 2m + 1, turned by θ(p, m), p the
// word's position (its row):
//   x′₂ₘ = x₂ₘ · cos θ − x₂ₘ₊₁ · sin θ,   x′₂ₘ₊₁ = x₂ₘ · sin θ + x₂ₘ₊₁ · cos θ
function detailRotation(key, i, c) {
  const plain = key === "Q_rot" ? "Q" : "K", rows = plain === "Q" ? qRows() : kRows();
  const m = Math.floor(c / 2), a = 2 * m, b = 2 * m + 1;
  const theta = T.rope.angles[i][m], [cv, sv] = [T.rope.cos[i][m], T.rope.sin[i][m]];
  const cos = op(cv, "cos", [i, m]), sin = op(sv, "sin", [i, m]);
  const [xv, yv] = [rows[i][a], rows[i][b]];
  const x = op(xv, plain, [i, a]), y = op(yv, plain, [i, b]);
  const names = [named(plain, i, a), named(plain, i, b)];
  const f = el("p", {class: "formula"}, `${named(key, i, c)} = `);
  const [wx, wy, wc, ws] = [written(xv, plain), written(yv, plain), written(cv, "cos"), written(sv, "sin")];
  let made;
  if (c === a) {
    f.append(`${names[0]} · cos θ − ${names[1]} · sin θ = `, expr(x, " · ", cos, " − ", y, " · ", sin));
    made = plus(times(wx, wc), times(wy, ws), -1);
  } else {
    f.append(`${names[0]} · sin θ + ${names[1]} · cos θ = `, expr(x, " · ", sin, " + ", y, " · ", cos));
    made = plus(times(wx, ws), times(wy, wc));
  }
  f.append(relation(made, head()[plain][i][c], key), result(head()[plain][i][c], key, [i, c]));
  return [el("p", {text: say("rotation", {m, a: a + 1, b: b + 1, p: i, base: T.rope.base})}),
          el("p", {class: "formula"}, "θ = ", op(theta, "angles", [i, m]), " rad"), f];
}

function arrows(i, j) { // the query and the key in their plane, with the key's shadow
  const g = D.geometry[state.head], p = palette();
  const qn = g.q_norm[i], kn = g.k_norms[j], angle = g.angles[i][j];
  if (angle === null) return [el("p", {text: W.no_angle})];
  const shadow = g.shadows[i][j], height = g.heights[i][j];
  // One scale for both axes, so the angle drawn is the true one.
  // The picture is as tall as the key's tip needs (at most 170 px).
  const w = 300, pad = 22;
  const s = Math.min((w / 2 - pad) / Math.max(qn, kn, 1e-9), (170 - 2 * pad) / Math.max(height, 1e-9));
  const hgt = Math.max(height * s, 16) + 2 * pad;
  const ox = w / 2, oy = hgt - pad;
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${w} ${hgt}`);
  svg.setAttribute("width", w); svg.setAttribute("height", hgt);
  svg.setAttribute("class", "arrows"); svg.setAttribute("role", "img");
  const score = head().scores[i][j];
  const text = say("arrows", {angle: g.degrees[i][j],  // whole degrees, as chapter 4 draws them
                              shadow: fmt(shadow), qnorm: fmt(qn), score: fmt(score),
                              rel: relation(times(written(shadow, "shadows"), written(qn, "q_norm")), score,
                                            "scores").textContent.trim()});
  svg.setAttribute("aria-label", text);
  const line = (x1, y1, x2, y2, colour, width, dash) => {
    const l = document.createElementNS(ns, "line");
    for (const [k, v] of Object.entries({x1, y1, x2, y2, stroke: colour, "stroke-width": width}))
      l.setAttribute(k, v);
    if (dash) l.setAttribute("stroke-dasharray", dash);
    svg.append(l);
  };
  const label = (x, y, t, colour) => {
    const e = document.createElementNS(ns, "text");
    e.setAttribute("x", x); e.setAttribute("y", y); e.setAttribute("fill", colour);
    e.setAttribute("font-size", "13"); e.textContent = t;
    svg.append(e);
  };
  const kx = ox + shadow * s, ky = oy - height * s;
  line(pad / 2, oy, w - pad / 2, oy, p.grid, 1);
  line(kx, ky, kx, oy, p.muted, 1.5, "4 3");
  line(ox, oy, kx, oy, p.k, 6);
  line(ox, oy, ox + qn * s, oy, p.q, 3);
  line(ox, oy, kx, ky, p.k, 3);
  label(ox + qn * s - 8, oy + 16, "q", p.q);
  label(kx + 4, ky - 4, "k", p.k);
  const geom = el("div", {class: "geometry", "data-angle": String(angle), "data-shadow": String(shadow),
                          "data-qnorm": String(qn), "data-knorm": String(kn)});
  geom.append(svg, el("p", {text}));
  return [geom];
}

function detailScore(i, j) {
  const h = head(), [q, k] = rotary() ? ["Q_rot", "K_rot"] : ["Q", "K"]; // the rows the scores use
  const pairs = h.Q[i].map((x, m) => [[x, q, [i, m]], [h.K[j][m], k, [j, m]]]);
  const p = sumOfProducts(pairs, result(h.scores[i][j], "scores", [i, j]), true,
                          [h.rest.scores[i][j], "rest_scores", [i, j]]);
  p.prepend(`${named("scores", i, j)} = `);
  const out = [el("p", {text: W.products}), p];
  if (!h.mask[i][j]) out.push(el("p", {text: W.masked}));
  return out.concat(arrows(i, j));
}

function detailScaled(i, j) {
  const h = head(), dk = h.Q[0].length, root = Number(fmt(Math.sqrt(dk))); // √d_k as written
  const s = h.scores[i][j];
  return [el("p", {class: "formula"}, `${named("scaled", i, j)} = ${named("scores", i, j)} / √${dk} = `,
             expr(op(s, "scores", [i, j]), " / ",
                  el("span", {class: "num sqrt", "data-v": String(root), text: fmt(root)})),
             relation(s / root, h.scaled[i][j], "scaled"), result(h.scaled[i][j], "scaled", [i, j])),
          el("p", {text: say("scale", {dk})})];
}

function detailSoftmax(i, j) {
  const h = head();
  if (!T.normalized) {
    return [el("p", {class: "formula"}, `${named("weights", i, j)} = `, expr(op(h.scores[i][j], "scores", [i, j])),
               relation(written(h.scores[i][j], "scores"), h.weights[i][j], "weights"),
               result(h.weights[i][j], "weights", [i, j])), el("p", {text: W.weights_raw})];
  }
  if (!h.mask[i][j]) {
    return [el("p", {class: "formula"}, `${named("weights", i, j)} = `, result(h.weights[i][j], "weights", [i, j])),
            el("p", {text: W.masked})];
  }
  const list = el("ul", {class: "exps"});
  const keys = shown(h.exp_shifted[i].length);
  for (const k of keys) {
    if (k === null) { list.append(el("li", {text: "…"})); continue; }
    const li = el("li", {class: "formula" + (k === j ? " this" : "")}, `${kWords()[k]}: `);
    const e = h.exp_shifted[i][k];
    if (h.mask[i][k]) li.append(expr("exp(", op(h.scaled[i][k], "scaled", [i, k]), " − ", op(h.row_max[i], "row_max", [i]), ")"),
                                relation(Math.exp(h.scaled[i][k] - h.row_max[i]), e, "exp_shifted"));
    else li.append(W.masked_short + " → ");
    li.append(op(e, "exp_shifted", [i, k]));
    list.append(li);
  }
  // Σ: the exps listed, and those the list leaves out as one number
  const sum = expr(), sumRest = h.rest.exp_sum[i];
  const terms = []; // as written, exact
  keys.forEach((k, n) => {
    if (n > 0) sum.append(" + ");
    if (k === null) {
      sum.append(el("span", {class: "aside", text: say("more_terms", {n: h.exp_shifted[i].length - keys.length + 1}) + " "}),
                 op(sumRest, "rest_exp_sum", [i]));
      terms.push(written(sumRest, "rest_exp_sum"));
    } else {
      sum.append(op(h.exp_shifted[i][k], "exp_shifted", [i, k]));
      terms.push(written(h.exp_shifted[i][k], "exp_shifted"));
    }
  });
  const w = h.exp_shifted[i][j] / h.exp_sum[i];
  return [el("p", {text: say("exp", {max: fmt(h.row_max[i])})}), list,
          el("p", {class: "formula"}, W.exp_sum + " ", sum, relation(total(terms), h.exp_sum[i], "exp_sum"),
             op(h.exp_sum[i], "exp_sum", [i])),
          el("p", {text: W.divide}),
          el("p", {class: "formula"}, `${named("weights", i, j)} = `,
             expr(op(h.exp_shifted[i][j], "exp_shifted", [i, j]), " / ", op(h.exp_sum[i], "exp_sum", [i])),
             relation(w, h.weights[i][j], "weights"), result(h.weights[i][j], "weights", [i, j]))];
}

function detailZ(i, c) {
  const h = head();
  const pairs = h.weights[i].map((a, k) => [[a, "weights", [i, k]], [h.V[k][c], "V", [k, c]]]);
  const p = sumOfProducts(pairs, result(h.Z[i][c], "Z", [i, c]), false, [h.rest.Z[i][c], "rest_Z", [i, c]]);
  p.prepend(`${named("Z", i, c)} = `);
  return [el("p", {text: W.weighted}), p];
}

function explain(key, i, j) {
  switch (key) {
    case "X": case "X_q": return detailX(key, i, j);
    case "W_Q": case "W_K": case "W_V": return detailWeight(key, i, j);
    case "Q": case "K": case "V": return detailProjection(key, i, j);
    case "Q_rot": case "K_rot": return detailRotation(key, i, j);
    case "scores": return detailScore(i, j);
    case "scaled": return detailScaled(i, j);
    case "weights": return detailSoftmax(i, j);
    case "Z": return detailZ(i, j);
  }
  return [];
}

// The caption on screen when the video first drew `key` (recorded by the scenes), else the
// first caption of the chapter that makes it (X_q: as X).
function cueOf(key) {
  if (key in D.made_at) return D.made_at[key];
  if (key === "X_q" && "X" in D.made_at) return D.made_at.X;
  const chapter = D.made_in[key === "X_q" ? "X" : key];
  return chapter ? D.cues.findIndex(c => c.chapter === chapter) : -1;
}

// A click, Enter or focus opens a cell: it stays open (its explanation in the panel, its
// "show me" there) until another cell is opened. The pointer resting on another cell only
// previews it; leaving the grids brings the open cell back.
function openCell(td, moveFocus) {
  const key = td.dataset.key, i = Number(td.dataset.i), j = Number(td.dataset.j);
  document.querySelectorAll("#grids td.open").forEach(x => x.classList.remove("open"));
  td.classList.add("open");
  state.open = {key, i, j};
  state.opener = td;
  const go = showCell(key, i, j, false);
  if (moveFocus) go.focus({preventScroll: true});
}

function previewCell(td) {
  showCell(td.dataset.key, Number(td.dataset.i), Number(td.dataset.j), true);
}

function endPreview() {
  const shown = document.querySelector("#detail-body .cell.preview");
  if (!shown) return;
  const c = state.open;
  if (c) showCell(c.key, c.i, c.j, false);
  else document.getElementById("detail-body").replaceChildren(el("p", {class: "hint", text: W.nothing_open}));
}

function showCell(key, i, j, preview) {
  const body = document.getElementById("detail-body");
  if (withheld(key, i, j)) { // its number would answer a question not yet answered
    body.replaceChildren(el("div", {class: "cell" + (preview ? " preview" : ""), "data-key": key,
                                    "data-i": i, "data-j": j},
                            el("p", {class: "hint", text: W.answer_first})));
    return null;
  }
  const box = el("div", {class: "cell" + (preview ? " preview" : ""), "data-key": key, "data-i": i,
                         "data-j": j, "data-head": state.head});
  box.append(...explain(key, i, j));
  const k = cueOf(key);
  if (preview) {
    box.append(el("p", {class: "hint preview-note", text: W.preview}));
    body.replaceChildren(box);
    return null;
  }
  const go = el("button", {type: "button", id: "show-me", text: W.show_me, disabled: k < 0,
                           "data-cue": k});
  go.addEventListener("click", () => seekTo(k));
  box.append(el("p", {}, go));
  if (k < 0) box.append(el("p", {class: "hint", text: W.not_shown}));
  body.replaceChildren(box);
  document.getElementById("detail").scrollTop = 0; // a new explanation reads from its top
  return go;
}

// Escape: from the explanation back to the cell that opened it; on an open cell, closes it.
function onEscape(ev) {
  if (ev.key !== "Escape") return;
  const inDetail = document.getElementById("detail").contains(document.activeElement);
  const opener = state.opener && state.opener.isConnected ? state.opener : openTd();
  if (inDetail && opener) {
    opener.focus({preventScroll: true});
    opener.scrollIntoView({block: "nearest", inline: "nearest"});
    ev.preventDefault();
  } else if (state.open && document.activeElement === opener) {
    opener.classList.remove("open");
    state.open = null;
    state.opener = null;
    document.getElementById("detail-body").replaceChildren(el("p", {class: "hint", text: W.nothing_open}));
    ev.preventDefault();
  }
}

function openTd() {
  const c = state.open;
  return c && document.querySelector(`#grids td[data-key="${c.key}"][data-i="${c.i}"][data-j="${c.j}"]`);
}

// ---- the video and its captions ---------------------------------------------------------
const video = document.getElementById("video");

function clock(t) {
  const m = Math.floor(t / 60), s = Math.floor(t % 60);
  return `${m}:${String(s).padStart(2, "0")}`;
}

function renderCues() {
  const list = document.getElementById("cues");
  list.replaceChildren(...D.cues.map((c, k) => {
    const b = el("button", {type: "button", "data-cue": k},
                 el("span", {class: "time", text: clock(c.start)}), c.text);
    b.addEventListener("click", () => seekTo(k));
    // --describe: what the caption's picture shows that it does not say, under it (the
    // button's name stays the caption's words)
    if (D.describe && c.description) {
      return el("li", {"data-chapter": c.chapter}, b,
                el("p", {class: "described", text: W.picture + " " + c.description}));
    }
    return el("li", {"data-chapter": c.chapter}, b);
  }));
}

function seekTo(k) {
  if (k < 0) return;
  state.posterAt = null;
  const c = D.cues[k];
  video.currentTime = c.start + Math.min(0.05, (c.end - c.start) / 2);
  follow(k);
}

// The caption playing at `t`: the last one to have started (between two captions, the
// one before's picture is still on screen), but never one of the chapter before: a chapter
// opens with its title and its first caption, so from its start that caption is current.
function cueAt(t) {
  let k = D.cues.length - 1;
  while (k >= 0 && D.cues[k].start > t) k--;
  if (D.marks.length) {
    const chapter = D.marks[chapterAt(t)].chapter;
    if (k < 0 || D.cues[k].chapter !== chapter) {
      const first = D.cues.findIndex(c => c.chapter === chapter);
      if (first >= 0) return first;
    }
  }
  return k;
}

// Mark the caption `k` as current and highlight what its chapter shows (kept on pause).
function follow(k) {
  const items = document.querySelectorAll("#cues li");
  items.forEach((li, n) => {
    if (n === k) li.setAttribute("aria-current", "true");
    else li.removeAttribute("aria-current");
  });
  if (k >= 0) {
    state.chapter = D.cues[k].chapter;
    scrollListTo(items[k]);
  }
  markNow();
}

// The caption list scrolls in its own box, and nothing else moves: scrollIntoView would
// scroll every box around it too, the page and the video with it.
function scrollListTo(li) {
  const list = li.parentNode;
  const top = li.offsetTop, bottom = top + li.offsetHeight;
  let to = null;
  if (top < list.scrollTop) to = top;
  else if (bottom > list.scrollTop + list.clientHeight) to = bottom - list.clientHeight;
  if (to !== null) list.scrollTo({top: to, behavior: reduceMotion ? "auto" : "smooth"});
}

function markNow() {
  const shows = new Set((D.shows[state.chapter] || []).concat(
    (D.shows[state.chapter] || []).includes("X") && T.cross ? ["X_q"] : []));
  document.getElementById("now").textContent = shows.size ? W.now_playing : "";
  for (const box of document.querySelectorAll("#grids .grid-box")) {
    const on = shows.has(box.dataset.key);
    box.classList.toggle("talked", on);
    const mark = box.querySelector("h3 .now-mark");
    if (on && !mark) box.querySelector("h3").append(el("span", {class: "now-mark", text: " ◀ " + W.talked_about}));
    if (!on && mark) mark.remove();
    const m = matrices().find(x => x.key === box.dataset.key);
    for (const td of box.querySelectorAll("td[data-i]")) {
      const row = m.rows === "q" ? Number(td.dataset.i) === state.focus : true;
      td.classList.toggle("now", on && row);
    }
  }
}

video.addEventListener("timeupdate", () => {
  if (posterShown()) return; // the poster frame, not the lecture: nothing is playing yet
  const k = cueAt(video.currentTime);
  const current = document.querySelector("#cues li[aria-current='true']");
  const was = current ? [...current.parentNode.children].indexOf(current) : -1;
  if (k >= 0 && k !== was) follow(k);
  markChapter();
});

// ---- chapters: the video's chapter marks (D.marks, the MP4's), a menu and [ ] to jump ----
// ] goes to the next chapter's start; [ to the start of the chapter playing once it has
// played this long, else to the previous chapter's (mpv's chapter-seek-threshold, 5 s).
const RESTART_AFTER = 5;
// The chapter playing at `t`: the last to have started (the video's time is kept to the
// microsecond, so a seek to a chapter's start may land a hair before it).
function chapterAt(t) {
  for (let n = D.marks.length - 1; n >= 0; n--) if (D.marks[n].start <= t + 0.001) return n;
  return 0;
}

function renderChapters() {
  const bar = document.getElementById("chapter-bar");
  bar.hidden = D.marks.length < 2; // one chapter: nowhere to jump
  document.getElementById("chapter-label").textContent = W.chapter;
  document.getElementById("chapter-keys").textContent = W.chapter_keys;
  const menu = document.getElementById("chapter");
  menu.replaceChildren(...D.marks.map((m, n) =>
    el("option", {value: n, text: `${m.title} (${clock(m.start)})`})));
  menu.addEventListener("change", () => seekChapter(Number(menu.value)));
}

// Seek to chapter `n`'s start (a hundredth of a second in: its first frame, not the last
// frame of the chapter before).
function seekChapter(n) {
  if (n < 0 || n >= D.marks.length) return;
  state.posterAt = null;
  video.currentTime = D.marks[n].start + 0.01;
  const k = cueAt(video.currentTime);
  if (k >= 0) follow(k);
  markChapter();
}

function markChapter() {
  const menu = document.getElementById("chapter");
  const n = String(chapterAt(video.currentTime));
  if (D.marks.length && menu.value !== n) menu.value = n;
}

// The video's chapters as a track of the page's own, like its captions (from its data: no
// file fetched): players and assistive technology that list chapters read it.
function chapterTrack() {
  if (!window.VTTCue || !D.marks.length) return;
  const track = video.addTextTrack("chapters", W.chapters, D.language);
  for (const m of D.marks) {
    const cue = new VTTCue(m.start, m.end, m.title);
    cue.id = m.chapter;
    track.addCue(cue);
  }
  track.mode = "hidden"; // read, never drawn over the picture
}

// ---- a page that travels: its poster, and a line when its video is not beside it ---------
// The poster is the page data's image (a data URI or a path beside the page) when it has
// one; else the frame in the middle of the first caption, shown by seeking there until the
// video is first played (its first frame is its bare background).
function poster() {
  state.posterAt = null;
  if (D.poster) { video.poster = D.poster; return; }
  if (!D.cues.length) return;
  const c = D.cues[0];
  const at = c.start + 0.6 * (c.end - c.start);
  let ours = false; // the seek to the poster frame, not the reader's
  video.addEventListener("loadedmetadata", () => {
    if (video.played.length || video.currentTime !== 0) return;
    state.posterAt = at;
    ours = true;
    video.currentTime = at;
  }, {once: true});
  video.addEventListener("seeking", () => {
    if (ours) ours = false;
    else state.posterAt = null; // the reader moved: that frame is theirs
  });
  video.addEventListener("play", () => { // the first play starts the video at its start
    if (state.posterAt !== null) video.currentTime = 0;
    state.posterAt = null;
  });
}
function posterShown() { // (the player keeps its time to the microsecond, and plays on)
  return state.posterAt !== null && state.posterAt !== undefined && Math.abs(video.currentTime - state.posterAt) < 0.05;
}

// Opened without its video (mailed or uploaded alone): say which file it plays and the
// command that makes it, instead of an empty player.
function alone() {
  const note = document.getElementById("alone");
  note.replaceChildren(say("alone", {file: decodeURIComponent(D.video)}), " ",
                       el("code", {text: shellJoin(D.remake)}));
  note.hidden = false;
  // a poster beside the page travels with the video, so it is missing too: no player at all
  if (!video.getAttribute("poster")?.startsWith("data:")) video.removeAttribute("poster");
  document.getElementById("player").classList.add("missing");
}

// A command line as it would be typed in a POSIX shell.
function shellJoin(args) {
  return args.map(a => /^[\w@%+=:,./-]+$/.test(a) ? a : "'" + a.replace(/'/g, "'\\''") + "'").join(" ");
}

// The captions as a track of the page's own (from its data: no file fetched, which
// file:// would refuse), shown once: not over captions burned into the picture.
function captionTrack() {
  const how = D.captions || (T.settings && T.settings.captions) || "burned";
  if (how === "burned" || how === "both" || !window.VTTCue) return;
  const track = video.addTextTrack("captions", W.captions, D.language);
  for (const c of D.cues) track.addCue(new VTTCue(c.start, c.end, c.text));
  track.mode = how === "soft" ? "showing" : "hidden"; // --captions none: offered, not shown
}

// --describe: what each caption's picture shows that it does not say, as the player's
// descriptions track (a screen reader or a describing player reads it; nothing is drawn).
function descriptionTrack() {
  if (!D.describe || !window.VTTCue) return;
  const track = video.addTextTrack("descriptions", W.descriptions, D.language);
  // (timed while the described narration says it, or while its caption is up: page_cues)
  for (const c of D.cues) {
    if (c.description) track.addCue(new VTTCue(c.described_start, c.described_end, c.description));
  }
  track.mode = "hidden"; // read out by what listens for its cues, never drawn over the picture
  // No browser speaks a descriptions track itself: as each cue starts, the page puts its
  // words in a polite live region, which a screen reader reads while the video plays.
  const live = document.getElementById("described-now");
  track.addEventListener("cuechange", () => {
    const cue = track.activeCues && track.activeCues[0];
    if (cue) live.textContent = cue.text;
  });
}

// ---- predict first: questions whose answers the grids hold, asked before they show -------
// What was answered stays in this browser (localStorage, per page): no server.
const PREDICT_KEY = "attention-page:" + D.video + "|" + D.sentence;
function kept() {
  try { return JSON.parse(localStorage.getItem(PREDICT_KEY)) || {}; } catch (e) { return {}; }
}
function keep(value) {
  try { localStorage.setItem(PREDICT_KEY, JSON.stringify(value)); } catch (e) { /* private mode */ }
}
function answered(n) { return (kept().answers || {})[n]; }
function withheld(key, i, j) {
  if (!state.predict || state.head !== T.head_index) return false;
  return D.questions.some((q, n) => answered(n) === undefined &&
                                    q.cells.some(c => c[0] === key && c[1] === i && c[2] === j));
}
function setPredict(on) {
  state.predict = on && D.questions.length > 0;
  keep(Object.assign(kept(), {on: state.predict}));
  document.getElementById("predict-toggle").setAttribute("aria-pressed", String(state.predict));
  document.getElementById("predict").hidden = !state.predict;
  renderQuestions();
  renderGrids();
  const c = state.open;
  if (c) showCell(c.key, c.i, c.j, false);
}
function renderQuestions() {
  const box = document.getElementById("questions");
  box.replaceChildren(...D.questions.map((q, n) => {
    const chosen = answered(n);
    const set = el("fieldset", {"data-question": n}, el("legend", {text: q.ask}));
    q.options.forEach((text, k) => {
      const input = el("input", {type: "radio", name: "q" + n, value: k, id: `q${n}-${k}`});
      if (chosen !== undefined) { input.disabled = true; input.checked = chosen === k; }
      set.append(el("label", {for: `q${n}-${k}`}, input, " " + text));
    });
    const verdict = el("p", {class: "verdict", role: "status"});
    if (chosen === undefined) {
      const check = el("button", {type: "button", text: W.check});
      check.addEventListener("click", () => {
        const picked = set.querySelector("input:checked");
        if (!picked) { verdict.textContent = W.pick_one; return; }
        keep(Object.assign(kept(), {answers: Object.assign(kept().answers || {},
                                                           {[n]: Number(picked.value)})}));
        renderQuestions();
        renderGrids();
        document.querySelector(`#questions fieldset[data-question="${n}"] .verdict`)?.focus();
      });
      set.append(check);
    } else {
      const right = chosen === q.answer;
      verdict.classList.add(right ? "right" : "wrong");
      verdict.tabIndex = -1;
      verdict.textContent = (right ? W.right : say("wrong", {answer: q.options[q.answer]})) + " " + q.reason;
    }
    set.append(verdict);
    return set;
  }));
}

// ---- the presenter view and full screen -------------------------------------------------
function setPresenter(on) {
  state.presenter = on;
  document.body.classList.toggle("presenter", on);
  document.getElementById("presenter").setAttribute("aria-pressed", String(on));
  if (on) window.scrollTo(0, 0);
  fitSide();
}

// Full screen is the page's (its presenter view), not the <video>'s, which would leave it.
function toggleFullScreen() {
  if (document.fullscreenElement) { document.exitFullscreen(); return; }
  setPresenter(true);
  document.documentElement.requestFullscreen().catch(() => {});
}

function onKey(ev) {
  if (ev.key === "Escape") { onEscape(ev); return; }
  if (ev.ctrlKey || ev.metaKey || ev.altKey || ev.target.closest("select, input, textarea")) return;
  if (ev.key === "p" || ev.key === "P") setPresenter(!state.presenter);
  else if ((ev.key === "f" || ev.key === "F") && document.fullscreenEnabled) toggleFullScreen();
  else if (ev.key === "[" || ev.key === "]") {
    const here = chapterAt(video.currentTime);
    const into = video.currentTime - (D.marks.length ? D.marks[here].start : 0);
    const n = ev.key === "]" ? here + 1 : into > RESTART_AFTER ? here : here - 1;
    if (n >= 0 && n < D.marks.length) { seekChapter(n); ev.preventDefault(); }
  }
}

// The left column is as tall as the screen below the header (and the word's note), so that
// the end of the caption list is on screen before the page scrolls too.
function fitSide() {
  const above = state.presenter ? 0 : document.getElementById("stage").offsetTop;
  document.documentElement.style.setProperty("--above", above + "px");
}

// ---- the followed word ------------------------------------------------------------------
// Another word picked than the video's: the grids follow it, and a line says the video
// still follows its own, with the command that renders one following the picked word.
function wordNote() {
  const note = document.getElementById("word-note");
  if (state.focus === T.focus) { note.hidden = true; note.replaceChildren(); fitSide(); return; }
  const words = qWords(), word = words[state.focus];
  const plain = words.filter(w => w === word).length === 1 && /^[\p{L}\p{N}'’-]+$/u.test(word);
  const args = D.remake.slice();
  args.splice(3, 0, ...(plain ? ["--query", word] : ["--query-index", String(state.focus)]));
  note.replaceChildren(say("other_word", {video: words[T.focus], word}), " ",
                       el("code", {text: shellJoin(args)}));
  note.hidden = false;
  fitSide();
}

// ---- the handout: what printing gives ---------------------------------------------------
// Every caption with its time (and its still when the data has one), the matrices in the
// light theme, and every cell of the followed word's rows with its explanation. Drawn
// after the page is ready (and again when the word or head changes), so that printing
// finds it whole; hidden on screen.
let handoutTimer = null;
function handoutLater() {
  document.body.dataset.handout = "0";
  clearTimeout(handoutTimer);
  handoutTimer = setTimeout(renderHandout, 30);
}

function renderHandout() {
  clearTimeout(handoutTimer);
  const stills = D.stills || [];
  const cues = el("ol", {class: "handout-cues"}, ...D.cues.map((c, k) => el("li", {},
    el("span", {class: "time", text: clock(c.start)}), " ", c.text,
    stills[k] ? el("img", {src: stills[k], alt: ""}) : null)));
  const [grids, cells] = inTheme("light", () => [matrices().map(m => renderGrid(m, "print-")), followedCells()]);
  for (const g of grids) {
    g.classList.replace("grid-box", "print-box");
    for (const e of g.querySelectorAll("[role], [tabindex], [data-key]")) {
      for (const a of ["role", "tabindex", "data-key"]) e.removeAttribute(a);
    }
    g.removeAttribute("data-key");
  }
  const word = qWords()[state.focus];
  document.getElementById("handout").replaceChildren(
    el("h2", {text: W.captions}), cues,
    el("h2", {text: W.numbers}), ...grids,
    el("h2", {text: say("handout_cells", {word})}), ...cells);
  document.body.dataset.handout = "1";
}

function followedCells() {
  const out = [];
  for (const m of matrices()) {
    if (!(m.rows === "q" || (m.key === "X" && !T.cross))) continue;
    const i = state.focus, cols = m.values[0].length;
    for (const j of shown(cols)) {
      if (j === null) { out.push(el("p", {class: "hint", text: say("more_columns", {n: cols - MAX_SHOWN + 1})})); continue; }
      out.push(el("div", {class: "print-cell"}, el("h3", {text: named(m.key, i, j)}), ...explain(m.key, i, j)));
    }
  }
  return out;
}

// ---- heads ------------------------------------------------------------------------------
function thumbnail(weights, size) {
  const ns = "http://www.w3.org/2000/svg", p = palette();
  const n = weights.length, m = n ? weights[0].length : 0, cell = size / Math.max(n, m, 1);
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("width", size); svg.setAttribute("height", size);
  svg.setAttribute("aria-hidden", "true");
  weights.forEach((row, i) => row.forEach((v, j) => {
    const r = document.createElementNS(ns, "rect");
    for (const [k, x] of Object.entries({x: j * cell, y: i * cell, width: cell, height: cell,
                                         fill: blend(p.w, p.background, Math.max(0, Math.min(1, v)))}))
      r.setAttribute(k, x);
    svg.append(r);
  }));
  return svg;
}

// A pattern of the model overview, large, with its words, in the explanation panel.
function openPattern(layer, n) {
  const weights = T.model_weights[layer][n];
  const name = say("layer_head", {layer, n});
  const svg = thumbnail(weights, 240);
  svg.removeAttribute("aria-hidden");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", name);
  const top = weights.map((row, i) => {
    const j = row.indexOf(Math.max(...row));
    return el("li", {}, `${qWords()[i]} → ${kWords()[j]} `, num(row[j], "model_weights", [layer, n, i, j], "op"));
  });
  const box = el("div", {class: "cell pattern", "data-layer": layer, "data-head": n},
                 el("p", {class: "formula", text: name}), svg, el("ul", {class: "exps"}, ...top));
  if (layer === T.layer && n !== state.head) { state.open = null; selectHead(n); }
  document.getElementById("detail-body").replaceChildren(box);
}

function selectHead(n) {
  state.head = n;
  for (const b of document.querySelectorAll("#heads .layer-heads button"))
    b.setAttribute("aria-pressed", String(Number(b.dataset.head) === n));
  renderGrids();
}

function renderModel() {
  if (!T.model_weights) return null;
  const rows = T.model_weights.map((heads, layer) => el("div", {class: "heads"}, ...heads.map((w, n) => {
    const b = el("button", {type: "button", "data-layer": layer, "data-head": n,
                            "aria-label": say("layer_head", {layer, n})}, thumbnail(w, 28));
    b.addEventListener("click", () => openPattern(layer, n));
    return b;
  })));
  return el("details", {class: "model"}, el("summary", {text: W.model}), ...rows);
}

function renderHeads() {
  const box = document.getElementById("heads");
  const model = renderModel();
  if (T.heads.length < 2) { box.replaceChildren(...(model ? [model] : [])); return; }
  const list = el("div", {class: "heads layer-heads"});
  T.heads.forEach((h, n) => {
    const b = el("button", {type: "button", "data-head": n, "aria-pressed": String(n === state.head),
                            "aria-label": say("open_head", {n})}, thumbnail(h.weights, 64),
                 el("span", {text: say("head_n", {n})}));
    b.addEventListener("click", () => selectHead(n));
    list.append(b);
  });
  box.replaceChildren(el("h3", {text: say("heads", {layer: T.layer})}),
                      el("p", {class: "hint", text: W.heads_hint}), list, ...(model ? [model] : []));
}

// ---- the controls -----------------------------------------------------------------------
function renderWords() {
  const select = document.getElementById("word");
  const words = qWords();
  select.replaceChildren(...words.map((w, i) => el("option", {
    value: i, text: words.filter(x => x === w).length > 1 ? `${w} (${i + 1})` : w,
    selected: i === state.focus})));
}

function start() {
  document.getElementById("word-label").textContent = W.follow;
  document.getElementById("theme-label").textContent = W.theme;
  for (const b of document.querySelectorAll("[data-theme-choice]")) {
    b.textContent = W[b.dataset.themeChoice];
    b.addEventListener("click", () => { state.theme = b.dataset.themeChoice; applyTheme(); renderHeads(); renderGrids(); });
  }
  for (const [id, key] of [["watch-h", "video"], ["captions-h", "captions"], ["captions-hint", "captions_hint"],
                           ["numbers-h", "numbers"], ["numbers-hint", "numbers_hint"]])
    document.getElementById(id).textContent = W[key];
  document.getElementById("detail-h").textContent = W.detail;
  const toggle = document.getElementById("predict-toggle");
  toggle.textContent = W.predict;
  toggle.hidden = D.questions.length === 0;
  toggle.addEventListener("click", () => setPredict(!state.predict));
  document.getElementById("predict-h").textContent = W.predict_h;
  document.getElementById("predict-hint").textContent = W.predict_hint;
  const deck = document.getElementById("deck-link");  // the --slides deck, when made too
  if (D.deck) Object.assign(deck, {href: D.deck, textContent: W.deck, hidden: false});
  document.getElementById("detail-body").replaceChildren(el("p", {class: "hint", text: W.nothing_open}));
  video.setAttribute("aria-label", D.sentence);
  document.getElementById("word").addEventListener("change", ev => {
    state.focus = Number(ev.target.value);
    renderGrids();
    wordNote();
  });
  const grids = document.getElementById("grids");
  grids.addEventListener("keydown", onGridKey);
  grids.addEventListener("focusin", ev => { const td = ev.target.closest("td[data-key]"); if (td) openCell(td, false); });
  grids.addEventListener("click", ev => { const td = ev.target.closest("td[data-key]"); if (td) openCell(td, false); });
  // The pointer on a cell previews it (moved there, not when the grids are drawn anew
  // under a pointer at rest); on the open cell, off the cells or out of the grids, the
  // open cell is back.
  grids.addEventListener("mousemove", ev => {
    const td = ev.target.closest("td[data-key]");
    const shown = document.querySelector("#detail-body .cell.preview");
    if (td && !td.classList.contains("open")) {
      if (!shown || shown.dataset.key !== td.dataset.key || shown.dataset.i !== td.dataset.i ||
          shown.dataset.j !== td.dataset.j) previewCell(td);
    } else endPreview();
  });
  grids.addEventListener("mouseleave", endPreview);
  document.addEventListener("keydown", onKey);
  const skip = document.getElementById("skip");
  skip.textContent = W.skip;
  skip.addEventListener("click", ev => { // to the first grid's cell, not just its box
    const cell = document.querySelector("#grids td[tabindex='0']");
    if (!cell) return;
    ev.preventDefault();
    cell.focus();
  });
  const presenter = document.getElementById("presenter");
  presenter.textContent = W.presenter;
  presenter.addEventListener("click", () => setPresenter(!state.presenter));
  const full = document.getElementById("fullscreen");
  full.textContent = W.full_screen;
  full.hidden = !document.fullscreenEnabled; // in an iframe without allowfullscreen
  full.addEventListener("click", toggleFullScreen);
  document.addEventListener("fullscreenchange", () => {
    // the player's own full screen (a double click) would leave the page: take the page's
    if (document.fullscreenElement === video) { document.exitFullscreen().then(toggleFullScreen, () => {}); return; }
    full.setAttribute("aria-pressed", String(Boolean(document.fullscreenElement)));
  });
  full.setAttribute("aria-pressed", "false");
  video.addEventListener("error", alone);
  if (video.error) alone();
  poster();
  captionTrack();
  chapterTrack();
  descriptionTrack();
  window.addEventListener("beforeprint", () => { if (document.body.dataset.handout !== "1") renderHandout(); });
  window.addEventListener("resize", fitSide);
  applyTheme();
  printColours();
  renderWords();
  renderCues();
  renderChapters();
  renderHeads();
  if (kept().on === true && D.questions.length > 0) setPredict(true); // as left last time
  else renderGrids();
  fitSide();
  document.body.dataset.readyMs = performance.now().toFixed(0); // since navigation began
  document.body.dataset.ready = "1";
}

start();
