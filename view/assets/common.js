// common.js: what every bloop page shares. The page's one global is the
// namespace object `bloop`; each file adds its part to it. Names from
// the profile (C++ names hold < and &) only ever reach the page through
// textContent, never as markup.
(function () {
  'use strict';
  var bloop = (window.bloop = window.bloop || {});

  // The page's data: JSON in a <script type="application/json"> element.
  bloop.loadData = function (id) {
    return JSON.parse(document.getElementById(id).textContent);
  };

  // The Go side's kinds, statuses and outcomes by name (view/enums.go):
  // scripts compare against bloop.enums.<table>.<name>, never a bare number.
  bloop.enums = bloop.loadData('bloop-enums');

  // enumName is the name of value in an enum table ('' for none): the
  // text and the class names the pages give a kind.
  bloop.enumName = function (table, value) {
    for (var k in table) if (table[k] === value) return k;
    return '';
  };

  // el makes an element with a class and a text.
  bloop.el = function (tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  };

  // pct formats v as a share of total, one decimal, as the text views do.
  bloop.pct = function (v, total) {
    return (total > 0 ? (100 * v) / total : 0).toFixed(1) + '%';
  };

  // num groups digits by thousands, so that large periods stay readable.
  bloop.num = function (v) {
    return String(v).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  };

  // timeUnits are the metric units that are time, in nanoseconds (view's
  // timeUnitNames).
  bloop.timeUnits = { ns: 1, us: 1e3, ms: 1e6, s: 1e9 };

  var DURATIONS = [[1e9, 's'], [1e6, 'ms'], [1e3, '\u00b5s'], [1, 'ns']];

  // time formats ns nanoseconds as report.Duration does, in the same
  // integer arithmetic (rounding half up): the largest of s, ms, \u00b5s
  // and ns that leaves at least 1, three significant digits.
  bloop.time = function (ns) {
    ns = Math.round(ns);
    if (ns === 0) return '0';
    var u = DURATIONS[DURATIONS.length - 1];
    for (var i = 0; i < DURATIONS.length; i++) {
      if (ns >= DURATIONS[i][0]) {
        u = DURATIONS[i];
        break;
      }
    }
    var digits = 0;
    if (u[0] > 1 && ns < 10 * u[0]) digits = 2;
    else if (u[0] > 1 && ns < 100 * u[0]) digits = 1;
    var pow = Math.pow(10, digits);
    var s = String(Math.floor((ns * pow * 2 + u[0]) / (2 * u[0])));
    if (digits > 0) {
      while (s.length <= digits) s = '0' + s;
      s = s.slice(0, s.length - digits) + '.' + s.slice(s.length - digits);
    }
    return s + u[1];
  };

  // regex compiles a user's pattern, case-insensitive; null for an empty
  // one, an Error for a bad one (the caller says so rather than throws).
  bloop.regex = function (pattern) {
    if (!pattern) return null;
    try {
      return new RegExp(pattern, 'i');
    } catch (err) {
      return err;
    }
  };

  // base is a path's last element, as the text views print files.
  bloop.base = function (path) {
    var i = path.lastIndexOf('/');
    return i >= 0 ? path.slice(i + 1) : path;
  };

  // tree turns a view's preorder columns (scope and child count per node)
  // into node objects: {id, scope, depth, parent, kids}.
  bloop.tree = function (t) {
    var nodes = new Array(t.scope.length);
    var labels = {};
    for (var k = 0; k + 1 < t.labels.length; k += 2) labels[t.labels[k]] = t.labels[k + 1];
    // Iterative, with a stack of the nodes still owed children: deep
    // trees (long call chains inverted) must not hit the call stack limit.
    var open = [];
    for (var id = 0; id < nodes.length; id++) {
      while (open.length && open[open.length - 1].left === 0) open.pop();
      var top = open.length ? open[open.length - 1] : null;
      var n = { id: id, scope: t.scope[id], depth: top ? top.n.depth + 1 : 0, parent: top ? top.n : null, kids: [], label: labels[id] };
      if (top) {
        top.n.kids.push(n);
        top.left--;
      }
      nodes[id] = n;
      open.push({ n: n, left: t.kids[id] });
    }
    return { nodes: nodes, root: nodes[0], cols: t };
  };

  // Scope accessors over the page's scope table.
  bloop.scopes = function (data) {
    var s = data.scopes;
    var str = data.strings;
    return {
      kind: function (i) { return s.kind[i]; },
      label: function (i) { return str[s.label[i]]; },
      name: function (i) { return str[s.name[i]]; },
      module: function (i) { return str[s.module[i]]; },
      file: function (i) { return str[s.file[i]]; },
      fileIdx: function (i) { return s.file[i]; },
      line: function (i) { return s.line[i]; },
      callFile: function (i) { return str[s.callFile[i]]; },
      callFileIdx: function (i) { return s.callFile[i]; },
      callLine: function (i) { return s.callLine[i]; },
      first: function (i) { return s.first[i]; },
      last: function (i) { return s.last[i]; },
      count: s.kind.length
    };
  };

  // The structure page's and the diff page's scope trees: preorder
  // columns (kind, name, file, line, kids, addr, size, calls).
  var S = bloop.enums.scope;
  var MAX_ROWS = 5000; // rows one expansion shows at most

  // smodel adds to a tree's columns each node's parent and subtree end,
  // computed once in typed arrays (a large module has hundreds of
  // thousands of nodes: no object per node).
  bloop.smodel = function (str, t) {
    var n = t.kind.length;
    var parent = new Int32Array(n);
    var end = new Int32Array(n); // one past the node's last descendant
    var open = [];
    var left = [];
    for (var i = 0; i < n; i++) {
      while (open.length && left[left.length - 1] === 0) {
        end[open.pop()] = i;
        left.pop();
      }
      parent[i] = open.length ? open[open.length - 1] : -1;
      if (left.length) left[left.length - 1]--;
      open.push(i);
      left.push(t.kids[i]);
    }
    while (open.length) end[open.pop()] = n;
    var calls = {};
    for (var k = 0; k + 2 < t.calls.length; k += 3) calls[t.calls[k]] = [t.calls[k + 1], t.calls[k + 2]];
    var m = { t: t, n: n, parent: parent, end: end, calls: calls, str: str };
    // kids lists a node's children: each child's subtree ends where the
    // next child starts.
    m.kids = function (i) {
      var out = [];
      for (var c = i + 1; c < end[i]; c = end[c]) out.push(c);
      return out;
    };
    // hex is a node's address: the data's hex text, exact (a number
    // would not be past 2^53).
    m.hex = function (i) {
      return t.addr[i];
    };
    m.label = function (i) {
      var f = str[t.file[i]];
      switch (t.kind[i]) {
        case S.proc:
          return str[t.name[i]];
        case S.inlined:
          var c = calls[i];
          return '[inlined] ' + str[t.name[i]] + (c ? ' (called at ' + bloop.base(str[c[0]]) + ':' + c[1] + ')' : '');
        case S.loop:
          return 'loop at ' + bloop.base(f) + ':' + t.line[i];
        case S.stmt:
          return bloop.base(f) + ':' + t.line[i];
        case S.guard:
          return '[code of ' + bloop.base(f) + ']';
        case S.file:
          return f;
      }
      return str[t.name[i]];
    };
    // detail is what a row shows after its label: addresses and sizes.
    m.detail = function (i) {
      switch (t.kind[i]) {
        case S.proc:
          return 'line ' + t.line[i] + ', ' + m.hex(i);
        case S.loop:
          return m.hex(i);
        case S.stmt:
          return m.hex(i) + ' +' + t.size[i];
      }
      return '';
    };
    // extent is a loop's lines in its own file: from its header to the
    // last statement of that file inside it.
    m.extent = function (k) {
      var last = t.line[k];
      for (var s = k + 1; s < end[k]; s++) {
        if (t.kind[s] === S.stmt && t.file[s] === t.file[k] && t.line[s] > last) last = t.line[s];
      }
      return [t.line[k], last];
    };
    return m;
  };

  // STreeView shows a tree below opts.root (default 0) as a table whose
  // scopes open on demand. opts.onSelect(i) is told of a row chosen;
  // opts.decorate(i, tr), when given, adds to a row.
  function STreeView(m, box, opts) {
    this.m = m;
    this.opts = opts;
    this.root = opts.root || 0;
    this.open = {};
    this.open[this.root] = true;
    this.sel = {};
    this.table = bloop.el('table', 'view stree');
    var scroll = bloop.el('div', 'scroll');
    scroll.append(this.table);
    this.scroll = scroll;
    this.note = bloop.el('div', 'info');
    box.append(this.note, scroll);
    var self = this;
    this.table.addEventListener('click', function (ev) {
      var tr = ev.target.closest('tr');
      if (!tr) return;
      var i = +tr.dataset.node;
      if (ev.target.classList.contains('tog')) {
        self.open[i] = !self.open[i];
        self.render();
        return;
      }
      self.select(i);
    });
  }

  // setRoot shows the tree below i (-1: none), closed but for i.
  STreeView.prototype.setRoot = function (i) {
    this.root = i;
    this.open = {};
    this.open[i] = true;
    this.sel = {};
    this.render();
  };

  STreeView.prototype.render = function () {
    var m = this.m;
    var t = m.t;
    var body = bloop.el('tbody');
    var rows = 0;
    var left = 0;
    var self = this;
    var visit = function (i, depth) {
      if (rows >= MAX_ROWS) {
        left++;
        return;
      }
      rows++;
      var kids = t.kids[i] > 0;
      var tr = bloop.el('tr', self.sel[i] ? 'sel' : null);
      tr.dataset.node = i;
      tr.dataset.depth = depth;
      var td = bloop.el('td', 'scope');
      td.style.paddingLeft = 0.3 + 1.1 * depth + 'em';
      td.append(bloop.el('span', 'tog', kids ? (self.open[i] ? '\u25be' : '\u25b8') : ''));
      td.append(bloop.el('span', 'label s-' + bloop.enumName(S, t.kind[i]), m.label(i)));
      var d = m.detail(i);
      if (d) td.append(bloop.el('span', 'detail', d));
      tr.append(td);
      if (self.opts.decorate) self.opts.decorate(i, tr);
      body.append(tr);
      if (kids && self.open[i]) m.kids(i).forEach(function (c) { visit(c, depth + 1); });
    };
    if (this.root >= 0) visit(this.root, 0);
    this.table.replaceChildren(body);
    this.note.textContent = left > 0 ? left + ' more rows not shown: close some scopes' : '';
  };

  // show opens the ancestors of the nodes in list (up to the root).
  STreeView.prototype.show = function (list) {
    var self = this;
    list.forEach(function (i) {
      for (var a = self.m.parent[i]; a >= 0; a = self.m.parent[a]) {
        self.open[a] = true;
        if (a === self.root) break;
      }
    });
  };

  // mark selects the nodes in list, opening their ancestors, and scrolls
  // to the first; it tells no one.
  STreeView.prototype.mark = function (list) {
    this.show(list);
    this.sel = {};
    var self = this;
    list.forEach(function (i) {
      self.sel[i] = true;
    });
    this.render();
    if (list.length) this.scrollTo(list[0]);
  };

  STreeView.prototype.scrollTo = function (i) {
    var row = this.table.querySelector('tr[data-node="' + i + '"]');
    var scroll = this.scroll;
    if (row) {
      requestAnimationFrame(function () {
        var top = row.getBoundingClientRect().top - scroll.getBoundingClientRect().top + scroll.scrollTop;
        scroll.scrollTop = Math.max(top - scroll.clientHeight / 3, 0);
      });
    }
  };

  // reveal opens the node's ancestors, selects it and scrolls to it.
  STreeView.prototype.reveal = function (i) {
    this.show([i]);
    this.select(i);
    this.scrollTo(i);
  };

  STreeView.prototype.select = function (i) {
    this.sel = {};
    this.sel[i] = true;
    this.render();
    this.opts.onSelect(i);
  };

  bloop.STreeView = STreeView;

  // sourceLines splits a file's text into lines (no last empty one).
  bloop.sourceLines = function (text) {
    var lines = text.split('\n');
    if (lines.length && lines[lines.length - 1] === '') lines.pop();
    return lines;
  };

  // ready marks the page rendered once its first frame is painted:
  // html[data-ready] gets the time since navigation (the browser tests
  // wait for it; it is the time-to-first-render measure).
  bloop.ready = function () {
    requestAnimationFrame(function () {
      performance.mark('bloop:frame');
      setTimeout(function () {
        performance.mark('bloop:painted');
        document.documentElement.dataset.ready = Math.round(performance.now());
      }, 0);
    });
  };

  // scrollPane scrolls pane so that row is in its middle, after layout.
  bloop.scrollPane = function (pane, row) {
    requestAnimationFrame(function () {
      var top = row.getBoundingClientRect().top - pane.getBoundingClientRect().top + pane.scrollTop;
      pane.scrollTop = Math.max(top - pane.clientHeight / 2, 0);
    });
  };
})();
