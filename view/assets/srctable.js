// srctable.js: the source listing every page shows: a file's lines with
// loop gutters, the line numbers, the page's own columns, the code and
// badges on it (inlined calls, changes). The report, structure and diff
// pages differ only in what they pass.
(function () {
  'use strict';
  var bloop = window.bloop;

  // packLoops gives each loop extent ({first, last, ...}) a column below
  // the loops that enclose it (lp.col) and returns the number of columns;
  // loops of the same extent are one. It sorts and filters the list.
  bloop.packLoops = function (loops) {
    loops.sort(function (a, b) {
      return a.first - b.first || b.last - a.last;
    });
    var seen = {};
    var kept = loops.filter(function (lp) {
      var k = lp.first + ':' + lp.last;
      if (seen[k]) return false;
      seen[k] = true;
      return true;
    });
    loops.length = 0;
    Array.prototype.push.apply(loops, kept);
    var open = [];
    var cols = 0;
    loops.forEach(function (lp) {
      open = open.filter(function (o) {
        return o.last >= lp.first;
      });
      lp.col = open.length;
      cols = Math.max(cols, lp.col + 1);
      open.push(lp);
    });
    return cols;
  };

  // gutterCell is one gutter of line n. A gutter holds loops
  // ({first, last, cls, title}) either packed (one column per nesting
  // level) or stacked (one column; data-depth says how many loops hold
  // the line when more than one).
  function gutterCell(g, n) {
    var td = bloop.el('td', 'gutter' + (g.cls ? ' ' + g.cls : ''));
    var mark = function (cell, lp) {
      cell.classList.add('in');
      if (lp.cls) cell.classList.add(lp.cls);
      if (n === lp.first) cell.classList.add('start');
      if (n === lp.last) cell.classList.add('end');
      if (lp.title && n === lp.head) cell.title = lp.title;
    };
    if (g.stack) {
      var cell = bloop.el('span', 'lc');
      var depth = 0;
      g.loops.forEach(function (lp) {
        if (n < lp.first || n > lp.last) return;
        depth++;
        mark(cell, lp);
      });
      if (depth > 1) cell.dataset.depth = depth;
      td.append(cell);
      return td;
    }
    for (var c = 0; c < g.cols; c++) td.append(bloop.el('span', 'lc'));
    g.loops.forEach(function (lp) {
      if (n >= lp.first && n <= lp.last) mark(td.children[lp.col], lp);
    });
    return td;
  }

  // sourceTable makes the listing. opts:
  //   lines: the file's text as lines (may be empty), numbers: the line
  //     numbers to list when it is (else 1 to lines.length);
  //   gutters: [{cls, loops, stack}] (packed gutters are packed here);
  //   head: column titles (none: no header row);
  //   cells(n): the page's cells between the number and the code;
  //   rowClass(n): the row's classes; badges(n): [{cls, text}] after the
  //     code; cur: the line marked current.
  // It returns {table, cur}: cur is the current line's row, if listed.
  bloop.sourceTable = function (opts) {
    var lines = opts.lines || [];
    var numbers = lines.length ? lines.map(function (_, i) { return i + 1; }) : opts.numbers || [];
    var gutters = opts.gutters || [];
    gutters.forEach(function (g) {
      if (!g.stack) g.cols = bloop.packLoops(g.loops);
    });
    var table = bloop.el('table', 'src' + (opts.cls ? ' ' + opts.cls : ''));
    if (opts.head) {
      var head = bloop.el('tr');
      opts.head.forEach(function (h) {
        head.append(bloop.el('th', null, h));
      });
      var thead = bloop.el('thead');
      thead.append(head);
      table.append(thead);
    }
    var body = bloop.el('tbody');
    var cur = null;
    numbers.forEach(function (n) {
      var tr = bloop.el('tr');
      tr.dataset.line = n;
      (opts.rowClass ? opts.rowClass(n) : []).forEach(function (c) {
        tr.classList.add(c);
      });
      gutters.forEach(function (g) {
        tr.append(gutterCell(g, n));
      });
      tr.append(bloop.el('td', 'ln', n));
      if (opts.cells) tr.append.apply(tr, opts.cells(n));
      var code = bloop.el('td', 'code', lines[n - 1] !== undefined ? lines[n - 1] : '');
      (opts.badges ? opts.badges(n) : []).forEach(function (b) {
        code.append(bloop.el('span', b.cls, b.text));
      });
      tr.append(code);
      if (n === opts.cur) {
        tr.classList.add('cur');
        cur = tr;
      }
      body.append(tr);
    });
    table.append(body);
    return { table: table, cur: cur };
  };
})();
