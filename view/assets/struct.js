// struct.js: the page of bloop struct --format html: one module's
// files, procedures, inlined calls, loops and statements as a tree that
// opens on demand, a search by procedure name, and the source of the
// scope chosen with its statements' lines and its loops marked.
(function () {
  'use strict';
  var bloop = window.bloop;
  var MAX_ROWS = 5000; // rows one expansion shows at most
  var MAX_HITS = 200; // search results listed at most
  var KINDS = ['proc', 'inlined', 'loop', 'stmt', 'guard', 'file', 'module'];

  // Model: the preorder columns with each node's parent, subtree end and
  // absolute address, computed once in typed arrays (a large module has
  // hundreds of thousands of nodes: no object per node).
  function model(data) {
    var t = data.tree;
    var n = t.kind.length;
    var parent = new Int32Array(n);
    var end = new Int32Array(n); // one past the node's last descendant
    var addr = new Float64Array(n);
    var open = [];
    var left = [];
    var a = 0;
    for (var i = 0; i < n; i++) {
      while (open.length && left[left.length - 1] === 0) {
        end[open.pop()] = i;
        left.pop();
      }
      parent[i] = open.length ? open[open.length - 1] : -1;
      if (left.length) left[left.length - 1]--;
      a += t.addr[i];
      addr[i] = a;
      open.push(i);
      left.push(t.kids[i]);
    }
    while (open.length) end[open.pop()] = n;
    var calls = {};
    for (var k = 0; k + 2 < t.calls.length; k += 3) calls[t.calls[k]] = [t.calls[k + 1], t.calls[k + 2]];
    var str = data.strings;
    var m = { t: t, n: n, parent: parent, end: end, addr: addr, calls: calls, str: str };
    // kids lists a node's children: each child's subtree ends where the
    // next child starts.
    m.kids = function (i) {
      var out = [];
      for (var c = i + 1; c < end[i]; c = end[c]) out.push(c);
      return out;
    };
    m.hex = function (i) {
      return '0x' + addr[i].toString(16);
    };
    m.label = function (i) {
      var f = str[t.file[i]];
      switch (t.kind[i]) {
        case 0:
          return str[t.name[i]];
        case 1:
          var c = calls[i];
          return '[inlined] ' + str[t.name[i]] + (c ? ' (called at ' + bloop.base(str[c[0]]) + ':' + c[1] + ')' : '');
        case 2:
          return 'loop at ' + bloop.base(f) + ':' + t.line[i];
        case 3:
          return bloop.base(f) + ':' + t.line[i];
        case 4:
          return '[code of ' + bloop.base(f) + ']';
        case 5:
          return f;
      }
      return str[t.name[i]];
    };
    // detail is what a row shows after its label: addresses and sizes.
    m.detail = function (i) {
      switch (t.kind[i]) {
        case 0:
          return 'line ' + t.line[i] + ', ' + m.hex(i);
        case 2:
          return m.hex(i);
        case 3:
          return m.hex(i) + ' +' + t.size[i];
      }
      return '';
    };
    return m;
  }

  function header(data) {
    var h = bloop.el('header');
    var title = bloop.el('h1', null, 'bloop struct');
    title.append(' ', bloop.el('code', 'command', data.module));
    var facts = bloop.el('div', 'facts');
    var c = data.counts;
    [['files', c.files], ['procedures', c.procs], ['inlined calls', c.inlined], ['loops', c.loops], ['statements', c.stmts]].forEach(function (f) {
      var s = bloop.el('span', 'fact');
      s.append(bloop.el('b', null, f[0] + ': '), bloop.num(f[1]));
      facts.append(s);
    });
    if (data.proc) {
      var s = bloop.el('span', 'fact');
      s.append(bloop.el('b', null, 'procedures matching: '), bloop.el('code', null, data.proc));
      facts.append(s);
    }
    h.append(title, facts);
    return h;
  }

  function Tree(m, box, onSelect) {
    this.m = m;
    this.open = { 0: true };
    this.sel = -1;
    this.onSelect = onSelect;
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

  Tree.prototype.render = function () {
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
      var tr = bloop.el('tr', i === self.sel ? 'sel' : null);
      tr.dataset.node = i;
      tr.dataset.depth = depth;
      var td = bloop.el('td', 'scope');
      td.style.paddingLeft = 0.3 + 1.1 * depth + 'em';
      td.append(bloop.el('span', 'tog', kids ? (self.open[i] ? '\u25be' : '\u25b8') : ''));
      td.append(bloop.el('span', 'label s' + t.kind[i], m.label(i)));
      var d = m.detail(i);
      if (d) td.append(bloop.el('span', 'detail', d));
      tr.append(td);
      body.append(tr);
      if (kids && self.open[i]) m.kids(i).forEach(function (c) { visit(c, depth + 1); });
    };
    visit(0, 0);
    this.table.replaceChildren(body);
    this.note.textContent = left > 0 ? left + ' more rows not shown: close some scopes' : '';
  };

  // reveal opens the node's ancestors, selects it and scrolls to it.
  Tree.prototype.reveal = function (i) {
    for (var a = this.m.parent[i]; a >= 0; a = this.m.parent[a]) this.open[a] = true;
    this.select(i);
    var row = this.table.querySelector('tr[data-node="' + i + '"]');
    var scroll = this.scroll;
    if (row) {
      requestAnimationFrame(function () {
        var top = row.getBoundingClientRect().top - scroll.getBoundingClientRect().top + scroll.scrollTop;
        scroll.scrollTop = Math.max(top - scroll.clientHeight / 3, 0);
      });
    }
  };

  Tree.prototype.select = function (i) {
    this.sel = i;
    this.render();
    this.onSelect(i);
  };

  // Source shows a file with the chosen scope's lines marked: its
  // statements' lines in the gutter, its loops as extents.
  function Source(m, data, box) {
    this.m = m;
    this.files = {};
    var self = this;
    data.files.forEach(function (f) {
      self.files[f.path] = f;
    });
    this.title = bloop.el('div', 'src-title', 'choose a scope to see its source');
    this.body = bloop.el('div', 'src-body');
    box.append(this.title, this.body);
  }

  Source.prototype.open = function (i) {
    var m = this.m;
    var t = m.t;
    var file = t.file[i];
    var target = t.line[i];
    // An inlined call whose callee's file is not here opens at its call.
    if (t.kind[i] === 1 && m.calls[i] && this.files[m.calls[i][0]] && !this.files[file]) {
      file = m.calls[i][0];
      target = m.calls[i][1];
    }
    var path = m.str[file];
    this.title.replaceChildren(bloop.el('span', 'path', path || m.label(i)));
    var f = this.files[file];
    if (!f || !f.text) {
      this.title.append(bloop.el('div', 'src-missing', f ? f.note : (path || m.label(i)) + ': no statement of this module is in it, so it was not embedded'));
      this.body.replaceChildren();
      return;
    }
    if (f.found && f.found !== path) this.title.append(bloop.el('span', 'found', ' read from ' + f.found));
    // The scope's own statements in this file, and its loops' extents.
    var stmts = {};
    var loops = [];
    for (var k = i; k < m.end[i]; k++) {
      if (t.file[k] !== file) continue;
      if (t.kind[k] === 3) stmts[t.line[k]] = (stmts[t.line[k]] || 0) + t.size[k];
      if (t.kind[k] === 2) {
        var last = t.line[k];
        for (var s = k + 1; s < m.end[k]; s++) {
          if (t.kind[s] === 3 && t.file[s] === file && t.line[s] > last) last = t.line[s];
        }
        loops.push([t.line[k], last]);
      }
    }
    var calls = {};
    for (var c in m.calls) {
      var ci = +c;
      if (ci >= i && ci < m.end[i] && m.calls[c][0] === file) (calls[m.calls[c][1]] = calls[m.calls[c][1]] || []).push(m.str[t.name[ci]]);
    }
    var lines = f.text.split('\n');
    if (lines.length && lines[lines.length - 1] === '') lines.pop();
    var table = bloop.el('table', 'src');
    var body = bloop.el('tbody');
    var cur = null;
    lines.forEach(function (text, k) {
      var n = k + 1;
      var tr = bloop.el('tr', stmts[n] !== undefined ? 'hot' : null);
      tr.dataset.line = n;
      var gutter = bloop.el('td', 'gutter');
      loops.forEach(function (lp) {
        var cell = bloop.el('span', 'lc');
        if (n >= lp[0] && n <= lp[1]) cell.classList.add('in');
        if (n === lp[0]) cell.classList.add('start');
        if (n === lp[1]) cell.classList.add('end');
        gutter.append(cell);
      });
      var code = bloop.el('td', 'code', text);
      (calls[n] || []).forEach(function (name) {
        code.append(bloop.el('span', 'inl', 'inlined: ' + name));
      });
      tr.append(gutter, bloop.el('td', 'ln', n), bloop.el('td', 'num', stmts[n] !== undefined ? stmts[n] + ' B' : ''), code);
      if (n === target) {
        tr.classList.add('cur');
        cur = tr;
      }
      body.append(tr);
    });
    table.append(body);
    this.body.replaceChildren(table);
    var pane = this.body;
    if (cur) {
      requestAnimationFrame(function () {
        var top = cur.getBoundingClientRect().top - pane.getBoundingClientRect().top + pane.scrollTop;
        pane.scrollTop = Math.max(top - pane.clientHeight / 2, 0);
      });
    }
  };

  // Search lists the procedures whose name matches.
  function Search(m, box, onPick) {
    var input = bloop.el('input', 'search');
    input.type = 'search';
    input.placeholder = 'procedure: regular expression';
    var info = bloop.el('span', 'info');
    var list = bloop.el('ol', 'hits');
    var bar = bloop.el('div', 'toolbar');
    bar.append(input, info);
    box.append(bar, list);
    var t = m.t;
    input.addEventListener('input', function () {
      var re = bloop.regex(input.value);
      list.replaceChildren();
      info.textContent = '';
      if (re instanceof Error) {
        info.textContent = 'bad expression: ' + re.message;
        return;
      }
      if (!re) return;
      var found = 0;
      for (var i = 0; i < m.n; i++) {
        if (t.kind[i] !== 0 || !re.test(m.str[t.name[i]])) continue;
        found++;
        if (found > MAX_HITS) continue;
        var li = bloop.el('li', 'hit');
        li.dataset.node = i;
        li.append(bloop.el('span', 'label s0', m.str[t.name[i]]), bloop.el('span', 'detail', bloop.base(m.str[t.file[i]]) + ':' + t.line[i]));
        list.append(li);
      }
      info.textContent = found + ' procedures' + (found > MAX_HITS ? ', the first ' + MAX_HITS + ' listed' : '');
    });
    list.addEventListener('click', function (ev) {
      var li = ev.target.closest('li');
      if (li) onPick(+li.dataset.node);
    });
  }

  bloop.startStruct = function () {
    performance.mark('bloop:start');
    var data = bloop.loadData('bloop-data');
    performance.mark('bloop:data');
    var m = model(data);
    var left = bloop.el('section', 'pane tables-pane');
    var right = bloop.el('section', 'pane source-pane');
    var lower = bloop.el('div', 'lower');
    lower.append(left, right);
    document.body.append(header(data), lower);
    var source = new Source(m, data, right);
    var tree;
    new Search(m, left, function (i) {
      tree.reveal(i);
    });
    tree = new Tree(m, left, function (i) {
      source.open(i);
    });
    tree.render();
    performance.mark('bloop:tree');
    bloop.page = { model: m, tree: tree, source: source, kinds: KINDS };
    requestAnimationFrame(function () {
      setTimeout(function () {
        performance.mark('bloop:painted');
        document.documentElement.dataset.ready = Math.round(performance.now());
      }, 0);
    });
  };

  bloop.startStruct();
})();
