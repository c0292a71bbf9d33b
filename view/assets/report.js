// report.js: the page of bloop report --html. It reads the embedded
// data, builds the header (command, samples, unwinding, thread and
// metric selectors) and the three panes, and ties them together: a
// frame or a row chosen anywhere opens its source.
(function () {
  'use strict';
  var bloop = window.bloop;
  var E = bloop.enums.elem;
  var O = bloop.enums.outcome;

  // context is what the panes share: the data, the thread and metric
  // shown, and the actions that cross panes.
  function context(data) {
    var ctx = { data: data, sc: bloop.scopes(data), metric: 0, threadIndex: 0, built: {} };
    ctx.thread = function () {
      return data.threads[ctx.threadIndex];
    };
    // tree builds a view's nodes once, when first shown: the thread's
    // top-down tree; the bottom-up tree is of all threads (as in bloop
    // report, only the top-down view is per thread).
    ctx.tree = function (view) {
      var th = view === 'top' ? ctx.threadIndex : 0;
      var key = th + '/' + view;
      if (!ctx.built[key]) ctx.built[key] = bloop.tree(data.threads[th][view]);
      return ctx.built[key];
    };
    ctx.flat = function () {
      return data.threads[0].flat;
    };
    ctx.incl = function (tree, n) {
      return tree.cols.incl[ctx.metric][n.id];
    };
    ctx.excl = function (tree, n) {
      return tree.cols.excl[ctx.metric][n.id];
    };
    // total is the 100% of every share: all threads' samples, as in
    // bloop report --threads (a thread's share is then its own).
    ctx.total = function () {
      return data.threads[0].top.incl[ctx.metric][0];
    };
    ctx.unit = function () {
      return data.metrics[ctx.metric].unit;
    };
    // value is a value of the metric shown as the text views print it:
    // time as time, a count as it is.
    ctx.value = function (v) {
      var ns = bloop.timeUnits[ctx.unit()];
      return ns ? bloop.time(v * ns) : String(v);
    };
    // valueUnit is a value with its unit, for sentences.
    ctx.valueUnit = function (v) {
      return bloop.timeUnits[ctx.unit()] ? ctx.value(v) : bloop.num(v) + ' ' + ctx.unit();
    };
    ctx.label = function (n) {
      return n.label !== undefined ? data.strings[n.label] : ctx.sc.label(n.scope);
    };
    // matches: a search or filter matches a node's label or its name.
    ctx.matches = function (n, re) {
      return re.test(ctx.label(n)) || (n.scope >= 0 && re.test(ctx.sc.name(n.scope)));
    };
    return ctx;
  }

  function header(ctx, onChange) {
    var data = ctx.data;
    var h = bloop.el('header');
    var title = bloop.el('h1', null, 'bloop report');
    var cmd = bloop.el('code', 'command', data.command);
    title.append(' ', cmd);
    var facts = bloop.el('div', 'facts');
    var fact = function (name, value) {
      var s = bloop.el('span', 'fact');
      s.append(bloop.el('b', null, name + ': '), value);
      facts.append(s);
    };
    fact('samples', bloop.num(data.samples));
    fact('lost', bloop.num(data.lost));
    var u = data.unwind;
    var unwound = u[O.complete] + u[O.truncated] + u[O.failed];
    if (unwound > 0) {
      fact('unwind', bloop.pct(u[O.complete], unwound) + ' to the entry (' + u[O.complete] + ' complete, ' + u[O.truncated] + ' truncated stack, ' + u[O.failed] + ' failed)');
    }
    if (data.chains > 0) fact('call paths as recorded', bloop.num(data.chains));
    var metric = bloop.el('select', 'metric');
    data.metrics.forEach(function (m, i) {
      var o = bloop.el('option', null, m.name + ' (' + (bloop.timeUnits[m.unit] ? 'time' : m.unit) + ')');
      o.value = i;
      metric.append(o);
    });
    var thread = bloop.el('select', 'thread');
    data.threads.forEach(function (t, i) {
      var o = bloop.el('option', null, t.name + ' \u2014 ' + bloop.pct(t.top.incl[0][0], data.threads[0].top.incl[0][0]));
      o.value = i;
      thread.append(o);
    });
    var sel = bloop.el('span', 'fact');
    sel.append(bloop.el('b', null, 'metric: '), metric, bloop.el('b', null, ' thread: '), thread);
    facts.append(sel);
    var more = bloop.el('details', 'summary');
    more.append(bloop.el('summary', null, 'summary as bloop report prints it'), bloop.el('pre', null, data.summary));
    h.append(title, facts, more);
    metric.addEventListener('change', function () {
      ctx.metric = +metric.value;
      onChange();
    });
    thread.addEventListener('change', function () {
      ctx.threadIndex = +thread.value;
      onChange();
    });
    return h;
  }

  // Tooltip follows the mouse over the flame graph.
  function Tooltip(ctx) {
    this.ctx = ctx;
    this.box = bloop.el('div', 'tip');
    this.box.hidden = true;
    document.body.append(this.box);
  }
  Tooltip.prototype.show = function (ev, tree, n) {
    var ctx = this.ctx;
    var sc = ctx.sc;
    var total = Math.max(ctx.total(), 1);
    var incl = ctx.incl(tree, n);
    var excl = ctx.excl(tree, n);
    var lines = [ctx.label(n), 'incl ' + ctx.valueUnit(incl) + ' (' + bloop.pct(incl, total) + '), excl ' + ctx.valueUnit(excl) + ' (' + bloop.pct(excl, total) + ')'];
    if (n.scope >= 0) {
      var s = n.scope;
      lines.push(bloop.enumName(E, sc.kind(s)) + (sc.module(s) ? ' in ' + sc.module(s) : ''));
      if (sc.file(s)) lines.push(sc.file(s) + (sc.line(s) ? ':' + sc.line(s) : ''));
      if (sc.kind(s) === E.inlined && sc.callFile(s)) lines.push('called at ' + sc.callFile(s) + ':' + sc.callLine(s));
      if (sc.kind(s) === E.loop && sc.first(s)) lines.push('lines ' + sc.first(s) + '-' + sc.last(s));
    }
    this.box.replaceChildren.apply(this.box, lines.map(function (l) {
      return bloop.el('div', null, l);
    }));
    this.box.hidden = false;
    var x = Math.min(ev.clientX + 14, window.innerWidth - this.box.offsetWidth - 8);
    this.box.style.left = Math.max(x, 0) + 'px';
    this.box.style.top = ev.clientY + 16 + 'px';
  };
  Tooltip.prototype.hide = function () {
    this.box.hidden = true;
  };

  bloop.startReport = function () {
    // Marks for the time to first render, by phase (performance.mark).
    performance.mark('bloop:start');
    var data = bloop.loadData('bloop-data');
    performance.mark('bloop:data');
    var ctx = context(data);
    ctx.tooltip = new Tooltip(ctx);
    var flameBox = bloop.el('section', 'pane flame-pane');
    var tablesBox = bloop.el('section', 'pane tables-pane');
    var sourceBox = bloop.el('section', 'pane source-pane');
    var lower = bloop.el('div', 'lower');
    lower.append(tablesBox, sourceBox);
    var flame, tables;
    var refresh = function () {
      flame.setTree(ctx.tree('top'));
      tables.reset();
    };
    document.body.append(header(ctx, refresh), flameBox, lower);
    var source = new bloop.Source(ctx, sourceBox);
    // select opens a scope's source at its line: a procedure's or
    // callee's declaration, a loop's header.
    ctx.select = function (scope) {
      var file = ctx.data.scopes.file[scope];
      if (!file) {
        source.title.textContent = ctx.sc.label(scope) + ': no source file known (no line table or structure for it)';
        source.body.replaceChildren();
        return;
      }
      source.open(file, ctx.sc.line(scope));
    };
    flame = new bloop.Flame(ctx, flameBox);
    ctx.zoom = function (n) {
      flame.zoomTo(n);
    };
    tables = new bloop.Tables(ctx, tablesBox);
    flame.setTree(ctx.tree('top'));
    performance.mark('bloop:flame');
    tables.show('top');
    performance.mark('bloop:tables');
    // The source of the hottest scope is shown first.
    var flat = ctx.flat();
    var hot = -1;
    flat.excl[0].forEach(function (v, i) {
      if (hot < 0 || v > flat.excl[0][hot]) hot = i;
    });
    if (hot >= 0) ctx.select(flat.scope[hot]);
    performance.mark('bloop:source');
    bloop.page = { ctx: ctx, flame: flame, tables: tables, source: source };
    bloop.ready();
  };

  bloop.startReport();
})();
