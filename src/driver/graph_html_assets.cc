// SPDX-License-Identifier: Apache-2.0
// The style sheet and script of the HTML graph view (graph_html.h), inlined into every page so
// that it needs no other file or network access. The script indexes every instruction (SVG nodes
// and table rows), writes their count onto <body data-node-count> for the browser test, filters
// and highlights by name or opcode as the search box is typed in, steps through matches with
// Enter, and opens the collapsed section a link or a match is in.
#include "driver/graph_html.h"

namespace nhlo {

const char* const kGraphPageStyle = R"css(
body { font: 14px/1.4 Helvetica, Arial, sans-serif; margin: 0; color: #222; }
header { position: sticky; top: 0; z-index: 2; background: #fafafa; border-bottom: 1px solid #ccc;
  padding: 6px 16px; }
h1 { font-size: 18px; margin: 4px 0; }
.counts { margin: 2px 0; color: #555; }
.search input { width: 28em; font-size: 14px; padding: 3px 6px; }
.hint { color: #888; font-size: 12px; }
.legend { margin: 4px 0; font-size: 12px; }
.swatch { display: inline-block; padding: 1px 6px; margin-left: 4px; border: 1px solid #999; }
.swatch.unmeasured { background: #f2f2f2; }
main { padding: 8px 16px; }
details.computation { border: 1px solid #ddd; border-radius: 4px; margin: 6px 0; padding: 2px 8px; }
details.entry { border-color: #888; }
summary { cursor: pointer; padding: 3px 0; }
summary .name { font-family: monospace; font-weight: bold; }
.kind { background: #333; color: #fff; font-size: 11px; padding: 0 4px; border-radius: 3px; }
.meta, .callers, .note { color: #666; font-size: 12px; }
.found { margin-left: 8px; color: #b00; font-size: 12px; }
.callers, .note { margin: 2px 0 6px 0; }
.graph { overflow: auto; max-height: 85vh; }
.graph svg { display: block; }
table.listing { border-collapse: collapse; font: 12px monospace; }
table.listing td, table.listing th { border: 1px solid #ddd; padding: 1px 6px; text-align: left; vertical-align: top;
  white-space: nowrap; }
body.searching g.node:not(.match) { opacity: 0.25; }
body.searching tr.inst:not(.match) { opacity: 0.4; }
g.node.match path, g.node.match polygon { stroke: #d00; stroke-width: 3px; }
tr.inst.match { outline: 2px solid #d00; }
g.node.current path, g.node.current polygon { stroke: #00f; stroke-width: 5px; }
tr.inst.current { outline: 3px solid #00f; }
.flash { animation: flash 1.5s; }
@keyframes flash { from { outline: 4px solid #00f; } to { outline: 4px solid transparent; } }
)css";

const char* const kGraphPageScript = R"js(
(function () {
  'use strict';
  // Every instruction once: Graphviz nodes carry the name in their <title> (its first word) and the
  // opcode in an `op-` class; rows of listed computations carry both in their cells.
  const items = [];
  for (const node of document.querySelectorAll('g.node')) {
    const title = node.querySelector('title');
    let op = '';
    for (const c of node.classList) if (c.startsWith('op-')) op = c.slice(3);
    const name = title ? title.textContent.split(/[\n ]/)[0] : '';
    items.push({ el: node, key: (name + ' ' + op).toLowerCase(), section: node.closest('details') });
  }
  for (const row of document.querySelectorAll('tr.inst')) {
    const name = row.cells[0].textContent.replace(/ ROOT$/, '');
    items.push({ el: row, key: (name + ' ' + row.dataset.op).toLowerCase(), section: row.closest('details') });
  }
  document.body.dataset.nodeCount = String(items.length);
  document.body.dataset.graphCount = String(document.querySelectorAll('.graph svg').length);

  // Opens every collapsed section around `el`, so that a link or a match inside one is seen.
  function reveal(el) {
    for (let d = el.closest('details'); d; d = d.parentElement && d.parentElement.closest('details')) d.open = true;
    el.scrollIntoView({ block: 'center', inline: 'center' });
    el.classList.remove('flash');
    void el.getBoundingClientRect();
    el.classList.add('flash');
  }
  function revealFragment(fragment) {
    if (!fragment) return;
    const el = document.getElementById(decodeURIComponent(fragment));
    if (el) reveal(el);
  }
  document.addEventListener('click', function (event) {
    const link = event.target.closest('a');
    if (!link) return;
    const href = link.getAttribute('href') || link.getAttributeNS('http://www.w3.org/1999/xlink', 'href') || '';
    if (!href.startsWith('#')) return;
    event.preventDefault();
    history.pushState(null, '', href);
    revealFragment(href.slice(1));
  });
  window.addEventListener('hashchange', function () { revealFragment(location.hash.slice(1)); });

  const box = document.getElementById('search');
  const counter = document.getElementById('match-count');
  let matches = [];
  let current = -1;
  let marked = [];
  function search() {
    const query = box.value.trim().toLowerCase();
    for (const m of matches) m.el.classList.remove('match', 'current');
    for (const s of marked) s.querySelector('.found').textContent = '';
    matches = [];
    marked = [];
    current = -1;
    document.body.classList.toggle('searching', query !== '');
    if (!query) {
      counter.textContent = '';
      return;
    }
    const perSection = new Map();
    for (const item of items) {
      if (!item.key.includes(query)) continue;
      matches.push(item);
      item.el.classList.add('match');
      perSection.set(item.section, (perSection.get(item.section) || 0) + 1);
    }
    for (const [section, count] of perSection) {
      if (!section) continue;
      section.querySelector('.found').textContent = count + (count === 1 ? ' match' : ' matches');
      marked.push(section);
    }
    counter.textContent = matches.length + (matches.length === 1 ? ' match' : ' matches') + ' in ' +
      perSection.size + (perSection.size === 1 ? ' computation' : ' computations');
  }
  function step(by) {
    if (!matches.length) return;
    if (current >= 0) matches[current].el.classList.remove('current');
    current = (current + by + matches.length) % matches.length;
    const item = matches[current];
    item.el.classList.add('current');
    reveal(item.el);
    counter.textContent = (current + 1) + ' of ' + matches.length + (matches.length === 1 ? ' match' : ' matches');
  }
  box.addEventListener('input', search);
  box.addEventListener('keydown', function (event) {
    if (event.key === 'Enter') {
      event.preventDefault();
      step(event.shiftKey ? -1 : 1);
    }
  });
  revealFragment(location.hash.slice(1));
})();
)js";

}  // namespace nhlo
