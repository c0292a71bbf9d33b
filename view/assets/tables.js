// tables.js: bloop report's three views as tables, with the text views'
// rows: top-down and bottom-up as expandable trees, flat as a list.
// Sortable by incl or excl (incl is the text views' order), filterable
// by a regular expression, and cut at a minimum share as --min cuts the
// text (1% by default, as there).
(function () {
  'use strict';
  var bloop = window.bloop;
  var MAX_ROWS = 20000; // beyond this a table says how many it left out
  var E = bloop.enums.elem;

  bloop.Tables = function (ctx, box) {
    this.ctx = ctx;
    this.view = 'top';
    this.sortKey = 'incl';
    this.re = null;
    this.min = 1;
    this.expanded = { top: null, bottom: null };

    var bar = bloop.el('div', 'toolbar');
    var self = this;
    this.tabs = {};
    [['top', 'top-down'], ['bottom', 'bottom-up'], ['flat', 'flat']].forEach(function (v) {
      var b = bloop.el('button', 'tab', v[1]);
      b.dataset.view = v[0];
      b.addEventListener('click', function () {
        self.show(v[0]);
      });
      self.tabs[v[0]] = b;
      bar.append(b);
    });
    var filter = bloop.el('input', 'filter');
    filter.type = 'search';
    filter.placeholder = 'filter: regular expression';
    var minLabel = bloop.el('label', 'min', 'min % ');
    var min = bloop.el('input', 'min');
    min.type = 'number';
    min.min = '0';
    min.step = 'any';
    min.value = '1';
    minLabel.append(min);
    var expand = bloop.el('button', 'expand', 'expand all');
    var collapse = bloop.el('button', 'collapse', 'collapse');
    this.note = bloop.el('span', 'info');
    bar.append(filter, minLabel, expand, collapse, this.note);
    this.legend = bloop.el('div', 'legend-text');
    this.table = bloop.el('table', 'view');
    var scroll = bloop.el('div', 'scroll');
    scroll.append(this.table);
    box.append(bar, this.legend, scroll);

    filter.addEventListener('input', function () {
      self.re = bloop.regex(filter.value);
      if (self.re instanceof Error) {
        self.note.textContent = 'bad expression: ' + self.re.message;
        self.re = null;
      }
      self.render();
    });
    min.addEventListener('input', function () {
      var v = parseFloat(min.value);
      self.min = isNaN(v) ? 0 : v;
      self.render();
    });
    expand.addEventListener('click', function () {
      self.expandAll(true);
    });
    collapse.addEventListener('click', function () {
      self.expandAll(false);
    });
    this.table.addEventListener('click', function (ev) {
      self.click(ev);
    });
  };

  var proto = bloop.Tables.prototype;

  var LEGENDS = {
    top: 'incl: samples in the scope and everything below it; excl: samples in the scope itself, in no loop, inlined call or callee shown below it',
    bottom: "first level: each sample's innermost scope (loop, inlined call or procedure), excl = its samples; below it: the scopes and callers around it, incl = samples that came through them",
    flat: 'incl: samples with the scope on their call path, once each; excl: samples whose innermost scope (loop, inlined call or procedure) it is'
  };

  // reset forgets the expanded nodes (another thread's trees).
  proto.reset = function () {
    this.expanded = { top: null, bottom: null };
    this.render();
  };

  proto.show = function (view) {
    this.view = view;
    for (var k in this.tabs) this.tabs[k].classList.toggle('on', k === view);
    this.render();
  };

  // The trees open on their hot paths: every node with 5% of the samples.
  proto.openSet = function (tree) {
    var ctx = this.ctx;
    var total = ctx.total();
    var set = {};
    tree.nodes.forEach(function (n) {
      if (ctx.incl(tree, n) * 20 >= total) set[n.id] = true;
    });
    return set;
  };

  proto.expandAll = function (all) {
    if (this.view === 'flat') return;
    var tree = this.ctx.tree(this.view);
    var set = {};
    if (all) tree.nodes.forEach(function (n) { set[n.id] = true; });
    else set[tree.root.id] = true;
    this.expanded[this.view] = set;
    this.render();
  };

  proto.header = function (flat) {
    var self = this;
    var tr = bloop.el('tr');
    var cols = [['incl', 'num'], ['incl%', 'num'], ['excl', 'num'], ['excl%', 'num']];
    if (flat) cols.push(['kind', 'kind']);
    cols.push(['scope', 'scope']);
    if (flat) cols.push(['in', 'scope']);
    cols.forEach(function (c) {
      var th = bloop.el('th', c[1], c[0]);
      if (c[0] === 'incl' || c[0] === 'excl') {
        th.classList.add('sortable');
        th.dataset.sort = c[0];
        if (self.sortKey === c[0]) th.classList.add('sorted');
      }
      tr.append(th);
    });
    var head = bloop.el('thead');
    head.append(tr);
    return head;
  };

  // numbers appends the four value cells of a row.
  // Values are shown as the text views print them (time as time).
  proto.numbers = function (tr, incl, excl, total) {
    var value = this.ctx.value;
    tr.append(bloop.el('td', 'num', value(incl)), bloop.el('td', 'num', bloop.pct(incl, total)),
      bloop.el('td', 'num', value(excl)), bloop.el('td', 'num', bloop.pct(excl, total)));
  };

  proto.render = function () {
    this.legend.textContent = LEGENDS[this.view];
    this.note.textContent = '';
    this.table.replaceChildren(this.header(this.view === 'flat'));
    var body = bloop.el('tbody');
    var shown = this.view === 'flat' ? this.renderFlat(body) : this.renderTree(body);
    this.table.append(body);
    if (shown.left > 0) this.note.textContent = shown.left + ' more rows not shown: raise min %';
    else if (this.view !== 'top' && this.ctx.threadIndex > 0) this.note.textContent = 'all threads (only the top-down view is per thread)';
  };

  proto.renderTree = function (body) {
    var ctx = this.ctx;
    var tree = ctx.tree(this.view);
    if (!this.expanded[this.view]) this.expanded[this.view] = this.openSet(tree);
    var open = this.expanded[this.view];
    var total = Math.max(ctx.total(), 1);
    var min = this.min;
    var key = this.sortKey;
    var re = this.re;
    // With a filter, the nodes kept are the matches and their ancestors,
    // and the ancestors are opened to show them.
    var keep = null;
    if (re) {
      keep = {};
      for (var i = tree.nodes.length - 1; i >= 0; i--) {
        var n = tree.nodes[i];
        if (keep[n.id] || ctx.matches(n, re)) {
          if (!keep[n.id]) keep[n.id] = true;
          if (n.parent) keep[n.parent.id] = 'path';
        }
      }
    }
    var rows = 0;
    var left = 0;
    var self = this;
    var visit = function (n) {
      var incl = ctx.incl(tree, n);
      if ((100 * incl) / total < min) return;
      if (keep && !keep[n.id]) return;
      if (rows >= MAX_ROWS) {
        left++;
        return;
      }
      rows++;
      var kids = self.sortKids(tree, n, key);
      var visible = kids.filter(function (c) {
        return (100 * ctx.incl(tree, c)) / total >= min && (!keep || keep[c.id]);
      });
      var isOpen = open[n.id] || (keep && keep[n.id] === 'path');
      var tr = bloop.el('tr');
      tr.dataset.node = n.id;
      tr.dataset.depth = n.depth;
      self.numbers(tr, incl, ctx.excl(tree, n), total);
      var td = bloop.el('td', 'scope');
      td.style.paddingLeft = 0.3 + 1.1 * n.depth + 'em';
      var tog = bloop.el('span', 'tog', visible.length ? (isOpen ? '\u25be' : '\u25b8') : '');
      var kind = n.scope >= 0 ? bloop.enumName(E, ctx.sc.kind(n.scope)) : 'root';
      td.append(tog, bloop.el('span', 'label k-' + kind, ctx.label(n)));
      tr.append(td);
      if (re && ctx.matches(n, re)) tr.classList.add('hit');
      body.append(tr);
      if (isOpen) visible.forEach(visit);
    };
    visit(tree.root);
    return { rows: rows, left: left };
  };

  // sortKids orders a node's children by the sort key's column of the
  // metric shown; the data's order is the text view's (the first metric's
  // incl), which the stable sort keeps among equals.
  proto.sortKids = function (tree, n, key) {
    var ctx = this.ctx;
    if (key === 'incl' && ctx.metric === 0) return n.kids;
    var value = key === 'incl' ? ctx.incl : ctx.excl;
    return n.kids.slice().sort(function (a, b) {
      return value(tree, b) - value(tree, a);
    });
  };

  proto.renderFlat = function (body) {
    var ctx = this.ctx;
    var f = ctx.flat();
    var m = ctx.metric;
    var total = Math.max(ctx.total(), 1);
    var order = f.scope.map(function (_, i) { return i; });
    if (this.sortKey === 'excl' || m > 0) {
      var col = this.sortKey === 'excl' ? f.excl[m] : f.incl[m];
      order.sort(function (a, b) {
        return col[b] - col[a] || a - b;
      });
    }
    var rows = 0;
    var left = 0;
    for (var k = 0; k < order.length; k++) {
      var i = order[k];
      var incl = f.incl[m][i];
      var sc = f.scope[i];
      var proc = ctx.data.strings[f.proc[i]];
      if ((100 * incl) / total < this.min) continue;
      var label = ctx.sc.label(sc);
      if (this.re && !this.re.test(label) && !this.re.test(proc)) continue;
      if (rows >= MAX_ROWS) {
        left++;
        continue;
      }
      rows++;
      var tr = bloop.el('tr');
      tr.dataset.row = i;
      tr.dataset.scope = sc;
      this.numbers(tr, incl, f.excl[m][i], total);
      // The kind column names kinds as the flat text view does.
      var kind = bloop.enumName(E, ctx.sc.kind(sc));
      tr.append(bloop.el('td', 'kind', kind));
      var td = bloop.el('td', 'scope');
      td.append(bloop.el('span', 'label k-' + kind, label));
      tr.append(td, bloop.el('td', 'scope in', proc));
      body.append(tr);
    }
    return { rows: rows, left: left };
  };

  proto.click = function (ev) {
    var th = ev.target.closest('th');
    if (th && th.dataset.sort) {
      this.sortKey = th.dataset.sort;
      this.render();
      return;
    }
    var tr = ev.target.closest('tr');
    if (!tr) return;
    if (tr.dataset.row !== undefined) {
      this.choose(tr, +tr.dataset.scope);
      return;
    }
    if (tr.dataset.node === undefined) return;
    var tree = this.ctx.tree(this.view);
    var n = tree.nodes[+tr.dataset.node];
    if (ev.target.classList.contains('tog')) {
      var open = this.expanded[this.view];
      open[n.id] = !open[n.id];
      this.render();
      return;
    }
    this.choose(tr, n.scope);
    // The flame graph shows the top-down tree: zoom it to the same node.
    if (this.view === 'top') this.ctx.zoom(n);
  };

  proto.choose = function (tr, scope) {
    var old = this.table.querySelector('tr.sel');
    if (old) old.classList.remove('sel');
    tr.classList.add('sel');
    if (scope >= 0) this.ctx.select(scope);
  };
})();
