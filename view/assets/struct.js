// struct.js: the page of bloop struct --format html: one module's
// files, procedures, inlined calls, loops and statements as a tree that
// opens on demand, a search by procedure name, and the source of the
// scope chosen with its statements' lines and its loops marked.
(function () {
  'use strict';
  var bloop = window.bloop;
  var MAX_HITS = 200; // search results listed at most
  var S = bloop.enums.scope;

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

  // Source shows a file (srctable.js's listing) with the chosen scope's
  // lines marked: its statements' lines and bytes, its loops' extents in
  // the gutter, the calls inlined on its lines.
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
    if (t.kind[i] === S.inlined && m.calls[i] && this.files[m.calls[i][0]] && !this.files[file]) {
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
      if (t.kind[k] === S.stmt) stmts[t.line[k]] = (stmts[t.line[k]] || 0) + t.size[k];
      if (t.kind[k] === S.loop) {
        var ext = m.extent(k);
        loops.push({ first: ext[0], last: ext[1] });
      }
    }
    var calls = {};
    for (var c in m.calls) {
      var ci = +c;
      if (ci >= i && ci < m.end[i] && m.calls[c][0] === file) (calls[m.calls[c][1]] = calls[m.calls[c][1]] || []).push(m.str[t.name[ci]]);
    }
    var listing = bloop.sourceTable({
      lines: bloop.sourceLines(f.text),
      gutters: [{ loops: loops }],
      cur: target,
      rowClass: function (n) {
        return stmts[n] !== undefined ? ['hot'] : [];
      },
      cells: function (n) {
        return [bloop.el('td', 'num', stmts[n] !== undefined ? stmts[n] + ' B' : '')];
      },
      badges: function (n) {
        return (calls[n] || []).map(function (name) {
          return { cls: 'inl', text: 'inlined: ' + name };
        });
      }
    });
    this.body.replaceChildren(listing.table);
    if (listing.cur) bloop.scrollPane(this.body, listing.cur);
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
        if (t.kind[i] !== S.proc || !re.test(m.str[t.name[i]])) continue;
        found++;
        if (found > MAX_HITS) continue;
        var li = bloop.el('li', 'hit');
        li.dataset.node = i;
        li.append(bloop.el('span', 'label s-proc', m.str[t.name[i]]), bloop.el('span', 'detail', bloop.base(m.str[t.file[i]]) + ':' + t.line[i]));
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
    var m = bloop.smodel(data.strings, data.tree);
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
    tree = new bloop.STreeView(m, left, {
      onSelect: function (i) {
        source.open(i);
      }
    });
    tree.render();
    performance.mark('bloop:tree');
    bloop.page = { model: m, tree: tree, source: source };
    bloop.ready();
  };

  bloop.startStruct();
})();
