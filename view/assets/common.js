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

  bloop.KIND_NAMES = ['proc', 'inlined', 'loop', 'line'];
})();
