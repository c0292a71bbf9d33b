// diff.js: the page of bloop diff --html: the procedures that differ
// between two structure files (or the pairs of two directories), the
// chosen one's two scope trees side by side with its changes coloured,
// and its source with both sides' loops and the changes on their lines.
// Which scopes correspond is golden's diff's word: the page's data says
// it (each change's nodes on each side); nothing here matches scopes.
(function () {
  'use strict';
  var bloop = window.bloop;
  var MAX_PROCS = 300; // procedures listed at most (a search narrows them)
  var MAX_SAME = 50; // identical procedures named at most
  var S = bloop.enums.scope;
  var C = bloop.enums.change;
  var ST = bloop.enums.status;

  var KIND_TEXT = {};
  KIND_TEXT[C.loopRemoved] = 'loop removed';
  KIND_TEXT[C.loopAdded] = 'loop added';
  KIND_TEXT[C.loopMoved] = 'loop moved';
  KIND_TEXT[C.loopSplit] = 'loop split';
  KIND_TEXT[C.loopFused] = 'loops fused';
  KIND_TEXT[C.inlineRemoved] = 'inlined call removed';
  KIND_TEXT[C.inlineAdded] = 'inlined call added';
  KIND_TEXT[C.inlineMoved] = 'inlined call moved';
  KIND_TEXT[C.stmtIntoLoop] = 'line into loop';
  KIND_TEXT[C.stmtOutOfLoop] = 'line out of loop';
  KIND_TEXT[C.address] = 'address';

  // How a change colours its nodes on each side: an addition's A nodes
  // and a removal's B nodes are where it would be, not changed.
  function classes(kind) {
    switch (kind) {
      case C.loopRemoved:
      case C.inlineRemoved:
        return ['rm', 'where'];
      case C.loopAdded:
      case C.inlineAdded:
        return ['where', 'add'];
      case C.loopMoved:
      case C.inlineMoved:
        return ['mv', 'mv'];
      case C.loopSplit:
      case C.loopFused:
        return ['sp', 'sp'];
      case C.address:
        return ['ad', 'ad'];
    }
    return ['st', 'st'];
  }

  // primary is the side whose node names a change: B for additions.
  function primary(c) {
    return c.kind === C.loopAdded || c.kind === C.inlineAdded ? 1 : 0;
  }

  function summaryText(s) {
    var moved = s.statements_into_loops + s.statements_out_of_loops;
    var out = s.procedures_differ + ' procedures differ: ' + s.procedures_added + ' added, ' + s.procedures_removed + ' removed; loops +' + s.loops_added +
      ' -' + s.loops_removed + ' moved ' + s.loops_moved + ' split ' + s.loops_split + ' fused ' + s.loops_fused + '; inlined calls +' + s.inlined_calls_added +
      ' -' + s.inlined_calls_removed + ' moved ' + s.inlined_calls_moved + '; statements moved ' + moved + ' (' + s.statements_into_loops + ' into loops, ' +
      s.statements_out_of_loops + ' out of loops)';
    if (s.address_differences > 0) out += '; addresses ' + s.address_differences;
    // The function-level decisions, as diff.Summary.String says them.
    var fs = [[s.functions_renamed, 'renamed'], [s.functions_cloned, 'cloned'], [s.functions_split, 'split'], [s.functions_joined, 'joined'],
      [s.functions_inlined, 'inlined'], [s.functions_outlined, 'outlined'], [s.functions_folded, 'folded'], [s.functions_unfolded, 'unfolded'],
      [s.stubs_added, 'PLT stubs added'], [s.stubs_removed, 'PLT stubs removed']];
    var parts = fs.filter(function (f) { return f[0] > 0; }).map(function (f) { return f[0] + ' ' + f[1]; });
    if (parts.length) out += '; functions ' + parts.join(', ');
    return out;
  }

  // STATUS_TEXT says what a function's status means, for the change box.
  var STATUS_TEXT = {};
  STATUS_TEXT[ST.added] = 'only in B';
  STATUS_TEXT[ST.removed] = 'only in A';
  STATUS_TEXT[ST.inlined] = 'out of line in A; in B only inlined, into';
  STATUS_TEXT[ST.outlined] = 'inlined in A, into';
  STATUS_TEXT[ST.folded] = 'in B its code is that of';
  STATUS_TEXT[ST.unfolded] = 'in A its code was that of';
  STATUS_TEXT[ST.stubAdded] = 'a PLT stub in B only';
  STATUS_TEXT[ST.stubRemoved] = 'a PLT stub in A only';
  STATUS_TEXT[ST.renamed] = 'its copies have other clone names';
  STATUS_TEXT[ST.cloned] = 'one side has more copies of it';
  STATUS_TEXT[ST.split] = 'B outlines parts of its body';
  STATUS_TEXT[ST.joined] = 'A outlined parts of its body';
  STATUS_TEXT[ST.changed] = 'its body changed';

  function statuses(p) {
    return [p.status].concat(p.also || []);
  }

  function header(data) {
    var h = bloop.el('header');
    var title = bloop.el('h1', null, 'bloop diff');
    title.append(' ', bloop.el('code', 'command name-a', data.a), ' \u2192 ', bloop.el('code', 'command name-b', data.b));
    var facts = bloop.el('div', 'facts');
    var t = data.totals;
    if (t) {
      facts.append(bloop.el('span', 'fact', t.pairs + ' pairs compared, ' + t.pairs_differ + ' differ, ' + t.only_in_a + ' only in a, ' + t.only_in_b + ' only in b, ' + t.errors + ' errors, ' + t.ignored + ' other files ignored'));
    }
    facts.append(bloop.el('span', 'fact summary-line', summaryText(data.summary)));
    if (data.proc) {
      var s = bloop.el('span', 'fact');
      s.append(bloop.el('b', null, 'procedures matching: '), bloop.el('code', null, data.proc));
      facts.append(s);
    }
    h.append(title, facts);
    data.errors.forEach(function (e) {
      h.append(bloop.el('div', 'src-missing', e));
    });
    return h;
  }

  function procName(str, p) {
    return str[p.pretty || p.name];
  }

  // Page holds the state: the pair and procedure shown, the change chosen.
  function Page(data) {
    this.data = data;
    this.str = data.strings;
    this.m = [bloop.smodel(data.strings, data.tree_a), bloop.smodel(data.strings, data.tree_b)];
    this.pair = null;
    this.proc = null;
    this.change = -1;
    // Files by string index, and by base name for the other side's
    // paths (two builds may name one file under different directories).
    var files = (this.files = {});
    var byBase = (this.byBase = {});
    var str = this.str;
    data.files.forEach(function (f) {
      files[f.path] = f;
      var b = bloop.base(str[f.path]);
      (byBase[b] = byBase[b] || []).push(f);
    });
  }

  Page.prototype.build = function () {
    var self = this;
    var data = this.data;
    var bar = bloop.el('div', 'toolbar diff-bar');
    if (data.totals) {
      var sel = (this.pairSel = bloop.el('select', 'pairs'));
      data.pairs.forEach(function (p, k) {
        var o = bloop.el('option', null, p.path + ': ' + summaryText(p.summary));
        o.value = k;
        sel.append(o);
      });
      [['only in a', data.only_in_a], ['only in b', data.only_in_b]].forEach(function (g) {
        if (!g[1].length) return;
        var og = bloop.el('optgroup');
        og.label = g[0];
        g[1].forEach(function (path) {
          var o = bloop.el('option', null, path + ' (' + g[0] + ')');
          o.disabled = true;
          og.append(o);
        });
        sel.append(og);
      });
      sel.addEventListener('change', function () {
        self.choosePair(+sel.value);
      });
      bar.append(bloop.el('b', null, 'pair: '), sel);
    }
    var input = (this.input = bloop.el('input', 'search'));
    input.type = 'search';
    input.placeholder = 'procedure: regular expression';
    input.addEventListener('input', function () {
      self.listProcs();
    });
    this.info = bloop.el('span', 'info');
    this.filter = bloop.el('span', 'status-filter');
    bar.append(input, this.filter, this.info);

    var left = bloop.el('section', 'pane procs-pane');
    this.procList = bloop.el('ol', 'procs');
    this.sameList = bloop.el('ol', 'same');
    left.append(bloop.el('h2', null, 'procedures'), this.procList, this.sameList);
    this.procList.addEventListener('click', function (ev) {
      var li = ev.target.closest('li');
      if (li) self.chooseProc(self.pair.procs[+li.dataset.proc]);
    });
    this.changeBox = bloop.el('div', 'changes-box');
    this.changeList = bloop.el('ol', 'changes');
    this.decisionBox = bloop.el('div', 'decisions');
    this.changeBox.append(bloop.el('h2', null, 'changes'), this.decisionBox, this.changeList);
    left.append(this.changeBox);
    this.changeList.addEventListener('click', function (ev) {
      var li = ev.target.closest('li');
      if (li && li.dataset.change !== undefined) self.chooseChange(+li.dataset.change, -1);
    });

    var right = bloop.el('section', 'diff-right');
    var sides = bloop.el('div', 'sides');
    this.trees = [];
    this.heads = [];
    for (var side = 0; side < 2; side++) {
      var box = bloop.el('div', 'pane side side-' + 'ab'[side]);
      var head = bloop.el('div', 'side-head name-' + 'ab'[side], (side ? 'B: ' : 'A: ') + (side ? data.b : data.a));
      this.heads.push(bloop.el('div', 'side-note'));
      box.append(head, this.heads[side]);
      this.trees.push(new bloop.STreeView(this.m[side], box, { root: -1, onSelect: this.onNode(side), decorate: this.decorator(side) }));
      sides.append(box);
    }
    var src = bloop.el('div', 'pane source-pane diff-source');
    this.srcTitle = bloop.el('div', 'src-title', 'choose a change or a scope to see its source');
    this.srcBody = bloop.el('div', 'src-body');
    var legend = bloop.el('div', 'legend-text', "gutter: A's loops, then B's; red: removed, green: added, violet: moved, orange: split or fused, yellow: a line into or out of a loop");
    src.append(this.srcTitle, legend, this.srcBody);
    right.append(sides, src);
    var main = bloop.el('div', 'diff-main');
    main.append(left, right);
    document.body.append(header(data), bar, main);
  };

  // decorator colours the rows of changed nodes.
  Page.prototype.decorator = function (side) {
    var self = this;
    return function (i, tr) {
      var cs = self.nodeChanges && self.nodeChanges[side][i];
      if (!cs) return;
      cs.forEach(function (k) {
        var cls = classes(self.proc.changes[k].kind)[side];
        tr.classList.add('ch-' + cls);
      });
      if (cs.indexOf(self.change) >= 0) tr.classList.add('ch-cur');
    };
  };

  // onNode: a changed node chooses its change (and so its counterpart on
  // the other side); another node opens its source.
  Page.prototype.onNode = function (side) {
    var self = this;
    return function (i) {
      var cs = self.nodeChanges[side][i];
      if (cs) {
        // Of a node's changes, those that change it rather than name it
        // as the place of the other side's addition or removal.
        var own = cs.filter(function (k) {
          return classes(self.proc.changes[k].kind)[side] !== 'where';
        });
        self.chooseChange((own.length ? own : cs)[0], side, i);
        return;
      }
      self.trees[1 - side].mark([]);
      self.openSource(side, i, -1);
    };
  };

  // STATUS_ORDER lists changed procedures first: the page is for their
  // trees (an added or removed one has one side only).
  var STATUS_ORDER = {};
  [ST.changed, ST.renamed, ST.cloned, ST.split, ST.joined, ST.inlined, ST.outlined, ST.folded, ST.unfolded,
    ST.removed, ST.added, ST.stubRemoved, ST.stubAdded].forEach(function (st, k) {
    STATUS_ORDER[st] = k;
  });

  Page.prototype.choosePair = function (k) {
    this.pair = this.data.pairs[k];
    var procs = this.pair.procs;
    // The report's order (file, name) within each status.
    this.order = procs.map(function (p, i) { return i; });
    this.order.sort(function (x, y) {
      return STATUS_ORDER[procs[x].status] - STATUS_ORDER[procs[y].status] || x - y;
    });
    if (this.pairSel) this.pairSel.value = k;
    this.buildFilter();
    this.chooseProc(procs.length ? procs[this.order[0]] : null);
  };

  // buildFilter makes one toggle per status the pair's procedures have,
  // with its count: a person narrows the list to what the compiler did
  // (only the inlined functions, say).
  Page.prototype.buildFilter = function () {
    var self = this;
    var counts = {};
    this.pair.procs.forEach(function (p) {
      statuses(p).forEach(function (st) {
        counts[st] = (counts[st] || 0) + 1;
      });
    });
    this.hidden = {};
    this.filter.replaceChildren();
    Object.keys(counts)
      .sort(function (x, y) { return STATUS_ORDER[x] - STATUS_ORDER[y]; })
      .forEach(function (st) {
        var label = bloop.el('label', 'status-toggle st-' + st);
        var box = bloop.el('input');
        box.type = 'checkbox';
        box.checked = true;
        box.dataset.status = st;
        box.addEventListener('change', function () {
          self.hidden[st] = !box.checked;
          self.listProcs();
        });
        label.append(box, ' ' + st + ' (' + counts[st] + ')');
        self.filter.append(label);
      });
  };

  // listProcs lists the pair's procedures that match the search, and
  // names the identical ones that match: a search says "identical"
  // rather than finding nothing.
  Page.prototype.listProcs = function () {
    var re = bloop.regex(this.input.value);
    var str = this.str;
    var self = this;
    this.procList.replaceChildren();
    this.sameList.replaceChildren();
    if (re instanceof Error) {
      this.info.textContent = 'bad expression: ' + re.message;
      return;
    }
    var test = function (name, pretty) {
      return !re || re.test(str[name]) || (pretty > 0 && re.test(str[pretty]));
    };
    var hidden = this.hidden || {};
    var shownStatus = function (p) {
      return statuses(p).some(function (st) { return !hidden[st]; });
    };
    var shown = 0;
    var n = 0;
    var procs = this.pair.procs;
    (this.order || []).forEach(function (k) {
      var p = procs[k];
      if (!test(p.name, p.pretty) || !shownStatus(p)) return;
      n++;
      if (shown >= MAX_PROCS) return;
      shown++;
      var li = bloop.el('li', 'proc st-' + p.status + (p === self.proc ? ' sel' : ''));
      li.dataset.proc = k;
      li.title = str[p.name];
      li.append(bloop.el('span', 'status', statuses(p).join(', ')), bloop.el('span', 'label s-proc', procName(str, p)), bloop.el('span', 'detail', str[p.file]));
      if (p.status === ST.changed) li.append(bloop.el('span', 'count', p.changes.length + (p.changes.length === 1 ? ' change' : ' changes')));
      self.procList.append(li);
    });
    var same = 0;
    var sa = this.pair.same;
    for (var k = 0; k + 1 < sa.length; k += 2) {
      if (!re || !test(sa[k], sa[k + 1])) continue;
      same++;
      if (same <= MAX_SAME) this.sameList.append(bloop.el('li', 'same-proc', 'identical: ' + str[sa[k + 1] || sa[k]]));
    }
    var total = sa.length / 2;
    var msg = n + ' procedures differ' + (n > shown ? ', the first ' + shown + ' listed' : '');
    msg += re ? '; ' + same + ' identical procedures match' : '; ' + total + ' identical';
    if (re && n === 0 && same === 0) msg = 'no procedure matches';
    this.info.textContent = msg;
  };

  Page.prototype.chooseProc = function (p) {
    this.proc = p;
    this.change = -1;
    var self = this;
    this.nodeChanges = [{}, {}];
    var roots = p ? [p.a, p.b] : [-1, -1];
    if (p) {
      p.changes.forEach(function (c, k) {
        [c.a, c.b].forEach(function (list, side) {
          list.forEach(function (i) {
            (self.nodeChanges[side][i] = self.nodeChanges[side][i] || []).push(k);
          });
        });
      });
    }
    for (var side = 0; side < 2; side++) {
      var t = this.trees[side];
      t.setRoot(roots[side]);
      this.heads[side].textContent = p && roots[side] < 0 ? 'not in ' + 'AB'[side] + ': the procedure was ' + p.status : '';
      // The changed scopes are open to see.
      if (p) {
        var changed = Object.keys(this.nodeChanges[side]).map(Number);
        t.show(changed);
        t.render();
      }
    }
    this.listChanges();
    this.listProcs();
    if (p && p.changes.length) this.chooseChange(0, -1);
    else if (p) this.openSource(roots[0] >= 0 ? 0 : 1, roots[0] >= 0 ? roots[0] : roots[1], -1);
  };

  // changeLabel names a change by its node on its primary side.
  Page.prototype.changeLabel = function (c) {
    var side = primary(c);
    var list = side ? c.b : c.a;
    var label = list.length ? this.m[side].label(list[0]) : '';
    var s = KIND_TEXT[c.kind] + ': ' + label;
    switch (c.kind) {
      case C.loopMoved:
        s += ': line ' + c.old + ' \u2192 ' + c.new;
        break;
      case C.inlineMoved:
        s += ': call site ' + c.old + ' \u2192 ' + c.new;
        break;
      case C.loopSplit:
        s += ': ' + (c.old ? c.old + ' loops into ' + c.new : 'into ' + c.count + ' loops');
        break;
      case C.loopFused:
        s += ': ' + (c.old ? c.old + ' loops into ' + c.new : c.count + ' loops into one');
        break;
      case C.address:
        s += ': ' + c.old + ' \u2192 ' + c.new;
        break;
    }
    if (c.now_in) s += ': its lines now in ' + c.now_in.map(function (p) { return p || '(procedure)'; }).join(', ');
    if (c.kind === C.loopRemoved && !c.now_in) s += ': its lines are not in B';
    if (c.nested_loops || c.nested_inlined_calls) s += ' (with ' + (c.nested_loops || 0) + ' nested loops, ' + (c.nested_inlined_calls || 0) + ' nested inlined calls)';
    return s;
  };

  Page.prototype.listChanges = function () {
    var self = this;
    this.changeList.replaceChildren();
    this.decisionBox.replaceChildren();
    if (!this.proc) return;
    this.proc.changes.forEach(function (c, k) {
      var li = bloop.el('li', 'change ch-' + classes(c.kind)[primary(c)] + (k === self.change ? ' sel' : ''), self.changeLabel(c));
      li.dataset.change = k;
      self.changeList.append(li);
    });
    this.decisionBox.replaceChildren(this.decisions(this.proc));
    if (!this.proc.changes.length && this.proc.status === ST.changed) this.changeList.append(bloop.el('li', 'info', 'the procedure was ' + this.proc.status));
  };

  // decisions says what the compilers decided about the function: its
  // statuses, its procedures on each side, the callers holding it.
  Page.prototype.decisions = function (p) {
    var str = this.str;
    var box = bloop.el('div', 'info');
    // A body that changed says so by its changes.
    if (p.status === ST.changed && !p.names_a && !p.names_b) return box;
    var names = function (list) {
      return list ? list.map(function (i) { return str[i]; }).join(', ') : null;
    };
    statuses(p).forEach(function (st) {
      var line = bloop.el('div', 'decision st-' + st);
      line.append(bloop.el('b', null, st + ': '), STATUS_TEXT[st] || '');
      if (p.callers && (st === p.status)) line.append(' ', bloop.el('code', null, names(p.callers)));
      box.append(line);
    });
    if (p.names_a || p.names_b) {
      var a = names(p.names_a) || (p.a >= 0 ? str[p.name] : '(none)');
      var b = names(p.names_b) || (p.b >= 0 ? str[p.name] : '(none)');
      var line = bloop.el('div', 'decision');
      line.append(bloop.el('b', null, 'procedures: '), 'A: ', bloop.el('code', null, a), ', B: ', bloop.el('code', null, b));
      box.append(line);
    }
    return box;
  };

  // chooseChange selects change k's nodes on both sides (the clicked one
  // on side `from`, node i, first) and opens its source.
  Page.prototype.chooseChange = function (k, from, i) {
    this.change = k;
    var c = this.proc.changes[k];
    var lists = [c.a, c.b];
    for (var side = 0; side < 2; side++) {
      var list = lists[side];
      if (side === from) list = [i].concat(list.filter(function (x) { return x !== i; }));
      this.trees[side].mark(list);
    }
    this.listChanges();
    var p = from >= 0 ? from : primary(c);
    var node = from >= 0 ? i : lists[p][0];
    this.openSource(p, node, k);
  };

  // where is the file and line a node is shown at: an inlined call's call
  // site, any other node's own line.
  Page.prototype.where = function (side, i) {
    var m = this.m[side];
    if (m.t.kind[i] === S.inlined && m.calls[i]) return { file: m.calls[i][0], line: m.calls[i][1] };
    return { file: m.t.file[i], line: m.t.line[i] };
  };

  // fileFor finds the embedded text of a path, else of a file of the
  // same base name (the other side's path).
  Page.prototype.fileFor = function (path) {
    var f = this.files[path];
    if (f && f.text) return f;
    var same = this.byBase[bloop.base(this.str[path])] || [];
    for (var k = 0; k < same.length; k++) if (same[k].text) return same[k];
    return f || null;
  };

  // marks collects, for the file of base name `base`, each side's loop
  // extents and the lines of the procedure's changes.
  Page.prototype.marks = function (base) {
    var self = this;
    var out = { loops: [[], []], rows: {} };
    var p = this.proc;
    if (!p) return out;
    var roots = [p.a, p.b];
    var inFile = function (side, f) {
      return bloop.base(self.str[f]) === base;
    };
    for (var side = 0; side < 2; side++) {
      var m = this.m[side];
      var r = roots[side];
      if (r < 0) continue;
      for (var k = r; k < m.end[r]; k++) {
        if (m.t.kind[k] !== S.loop || !inFile(side, m.t.file[k])) continue;
        var cs = this.nodeChanges[side][k] || [];
        var cls = cs.map(function (x) { return classes(p.changes[x].kind)[side]; }).filter(function (x) { return x !== 'where'; });
        out.loops[side].push({ ext: m.extent(k), cls: cls[0] || '' });
      }
    }
    p.changes.forEach(function (c, k) {
      [c.a, c.b].forEach(function (list, side) {
        var cls = classes(c.kind)[side];
        if (cls === 'where') return;
        list.forEach(function (i) {
          var w = self.where(side, i);
          if (!inFile(side, w.file)) return;
          var row = (out.rows[w.line] = out.rows[w.line] || []);
          row.push({ side: side, cls: cls, text: 'AB'[side] + ': ' + KIND_TEXT[c.kind] + (self.m[side].t.kind[i] === S.inlined ? ' ' + self.str[self.m[side].t.name[i]] : ''), change: k });
        });
      });
    });
    return out;
  };

  // openSource shows the file of node i of side at its line (srctable.js's
  // listing), with both sides' loops in two gutter columns and the
  // changes on their lines.
  Page.prototype.openSource = function (side, i, change) {
    var w = this.where(side, i);
    var path = this.str[w.file];
    this.srcTitle.replaceChildren(bloop.el('span', 'path', path || this.m[side].label(i)));
    var f = this.fileFor(w.file);
    if (!f || !f.text) {
      this.srcTitle.append(bloop.el('div', 'src-missing', f && f.note ? f.note : (path || '?') + ': not embedded'));
      this.srcBody.replaceChildren();
      return;
    }
    if (f.found && f.found !== path) this.srcTitle.append(bloop.el('span', 'found', ' read from ' + f.found));
    var mk = this.marks(bloop.base(path));
    var rows = function (n) {
      return mk.rows[n] || [];
    };
    var listing = bloop.sourceTable({
      cls: 'diff-src',
      lines: bloop.sourceLines(f.text),
      gutters: [0, 1].map(function (s) {
        return { cls: 'g' + 'ab'[s], stack: true, loops: mk.loops[s].map(function (lp) { return { first: lp.ext[0], last: lp.ext[1], cls: lp.cls }; }) };
      }),
      cur: w.line,
      rowClass: function (n) {
        var out = [];
        rows(n).forEach(function (r) {
          out.push('ch-' + r.cls);
          if (r.change === change) out.push('ch-cur');
        });
        return out;
      },
      badges: function (n) {
        return rows(n).map(function (r) {
          return { cls: 'badge ch-' + r.cls, text: r.text };
        });
      }
    });
    this.srcBody.replaceChildren(listing.table);
    if (listing.cur) bloop.scrollPane(this.srcBody, listing.cur);
  };

  bloop.startDiff = function () {
    performance.mark('bloop:start');
    var data = bloop.loadData('bloop-data');
    performance.mark('bloop:data');
    var page = new Page(data);
    page.build();
    if (data.pairs.length) {
      page.choosePair(0);
    } else {
      page.pair = { procs: [], same: [] };
      page.listProcs();
    }
    performance.mark('bloop:tree');
    bloop.page = page;
    bloop.ready();
  };

  bloop.startDiff();
})();
