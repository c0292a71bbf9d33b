// source.js: the report page's source pane: a file with its samples per
// line: self (the line is the sample's innermost scope) and total (the
// line is on the sample's path: a call site holds its callees'), the
// total's share and a bar, in srctable.js's listing. The gutter marks
// each loop's extent, one column per nesting level, and a badge names
// the calls inlined on a line.
(function () {
  'use strict';
  var bloop = window.bloop;
  var E = bloop.enums.elem;

  bloop.Source = function (ctx, box) {
    this.ctx = ctx;
    this.title = bloop.el('div', 'src-title', 'choose a frame or a row to see its source');
    this.body = bloop.el('div', 'src-body');
    box.append(this.title, this.body);
    this.files = {};
    var self = this;
    ctx.data.files.forEach(function (f) {
      self.files[f.path] = f;
    });
    this.cache = {};
  };

  var proto = bloop.Source.prototype;

  // open shows file (a string index: the line table's path) at line.
  proto.open = function (file, line) {
    var ctx = this.ctx;
    var path = ctx.data.strings[file];
    var f = this.files[file];
    var lines = this.lineData(file);
    this.title.replaceChildren(bloop.el('span', 'path', path));
    if (f && f.found && f.found !== path) this.title.append(bloop.el('span', 'found', ' read from ' + f.found));
    this.title.append(bloop.el('span', 'file-total', ' \u2014 ' + ctx.valueUnit(lines.self) + ' on its lines'));
    // A file not embedded says why above its lines (out of their scroll).
    if (!f || !f.text) {
      var why = f ? f.note : path + ': no sample reaches it, so it was not embedded';
      if (f && / not found$/.test(why)) why += ' when the report was made (bloop report --html -I DIR and -R OLD=NEW say where sources are)';
      this.title.append(bloop.el('div', 'src-missing', why));
    }
    var key = file + '/' + ctx.threadIndex + '/' + ctx.metric;
    var view = this.cache[key];
    if (!view) {
      view = bloop.el('div', 'src-view');
      view.append(this.table(file, f && f.text, lines));
      this.cache[key] = view;
    }
    this.body.replaceChildren(view);
    var old = view.querySelector('tr.cur');
    if (old) old.classList.remove('cur');
    var row = view.querySelector('tr[data-line="' + line + '"]');
    if (row) {
      row.classList.add('cur');
      // Scroll the pane only (scrollIntoView would scroll the page too),
      // before the next frame: the layout it needs is that frame's.
      var body = this.body;
      requestAnimationFrame(function () {
        var top = row.getBoundingClientRect().top - body.getBoundingClientRect().top + body.scrollTop;
        body.scrollTop = Math.max(top - body.clientHeight / 2, 0);
      });
    }
  };

  // lineData gathers the current thread's samples on file's lines.
  proto.lineData = function (file) {
    var ctx = this.ctx;
    var l = ctx.thread().lines;
    var m = ctx.metric;
    var out = { byLine: {}, self: 0 };
    for (var i = 0; i < l.file.length; i++) {
      if (l.file[i] !== file) continue;
      out.byLine[l.line[i]] = [l.incl[m][i], l.excl[m][i]];
      out.self += l.excl[m][i];
    }
    return out;
  };

  // marks finds the loops of file (their extents) and the inlined calls
  // made on its lines.
  proto.marks = function (file) {
    var sc = this.ctx.sc;
    var loops = [];
    var calls = {};
    for (var i = 0; i < sc.count; i++) {
      if (sc.kind(i) === E.loop && sc.fileIdx(i) === file) {
        var lp = { first: sc.first(i) || sc.line(i), last: sc.last(i) || sc.line(i), head: sc.line(i) };
        lp.title = 'loop at line ' + lp.head + ' (lines ' + lp.first + '-' + lp.last + ')';
        loops.push(lp);
      } else if (sc.kind(i) === E.inlined && sc.callFileIdx(i) === file && sc.callLine(i) > 0) {
        var names = (calls[sc.callLine(i)] = calls[sc.callLine(i)] || []);
        if (names.indexOf(sc.name(i)) < 0) names.push(sc.name(i));
      }
    }
    return { loops: loops, calls: calls };
  };

  // table lists file's lines (those with samples when its text is not
  // here) with their samples: self, total, total's share and a bar.
  proto.table = function (file, text, lines) {
    var ctx = this.ctx;
    var total = Math.max(ctx.total(), 1);
    var marks = this.marks(file);
    var numbers = Object.keys(lines.byLine).map(Number);
    var max = 1;
    numbers.forEach(function (n) {
      max = Math.max(max, lines.byLine[n][0]);
    });
    return bloop.sourceTable({
      lines: text ? bloop.sourceLines(text) : [],
      numbers: numbers.sort(function (a, b) { return a - b; }),
      gutters: [{ loops: marks.loops }],
      head: ['', 'line', 'self', 'total', '%', '', 'source'],
      rowClass: function (n) {
        return lines.byLine[n] ? ['hot'] : [];
      },
      cells: function (n) {
        var v = lines.byLine[n];
        var barCell = bloop.el('td', 'barcell');
        if (v) {
          var bar = bloop.el('span', 'bar');
          bar.style.width = ((100 * v[0]) / max).toFixed(1) + '%';
          var self = bloop.el('span', 'self');
          self.style.width = v[0] > 0 ? ((100 * v[1]) / v[0]).toFixed(1) + '%' : '0';
          bar.append(self);
          barCell.append(bar);
        }
        return [bloop.el('td', 'num', v ? ctx.value(v[1]) : ''), bloop.el('td', 'num', v ? ctx.value(v[0]) : ''), bloop.el('td', 'num', v ? bloop.pct(v[0], total) : ''), barCell];
      },
      badges: function (n) {
        return (marks.calls[n] || []).map(function (name) {
          return { cls: 'inl', text: 'inlined: ' + name };
        });
      }
    }).table;
  };
})();
