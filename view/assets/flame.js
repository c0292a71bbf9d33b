// flame.js: the calling-context tree as an icicle (root on top) or a
// flame graph (root at the bottom). Each frame is a positioned element
// whose width is its share of the zoomed frame's samples; frames
// narrower than a pixel are not drawn. Clicking a frame zooms to it and
// opens its source; the breadcrumb zooms back out.
(function () {
  'use strict';
  var bloop = window.bloop;
  var ROW = 18; // px per level
  var MIN_WIDTH = 1; // px: narrower frames (and their callees) are not drawn
  // Narrower frames get no text: most frames of a large profile are a few
  // pixels wide, and laying out their text (clipped to nothing) is most
  // of the page's first render. The tooltip names them.
  var MIN_TEXT = 24; // px
  var E = bloop.enums.elem;

  bloop.Flame = function (ctx, box) {
    this.ctx = ctx;
    this.flame = false; // icicle by default
    this.re = null;
    this.tree = null;
    this.zoom = null;

    var bar = bloop.el('div', 'toolbar');
    this.crumbs = bloop.el('div', 'crumbs');
    var toggle = bloop.el('button', 'mode', 'flame');
    toggle.title = 'icicle (root on top) or flame graph (root at the bottom)';
    var search = bloop.el('input', 'search');
    search.type = 'search';
    search.placeholder = 'search: regular expression';
    this.info = bloop.el('span', 'info');
    bar.append(this.crumbs, toggle, search, this.info);
    this.canvas = bloop.el('div', 'frames');
    var legend = bloop.el('div', 'legend');
    [[E.proc, 'procedure'], [E.inlined, 'inlined call'], [E.loop, 'loop']].forEach(function (k) {
      legend.append(bloop.el('span', 'swatch k-' + bloop.enumName(E, k[0]), k[1]));
    });
    box.append(bar, legend, this.canvas);

    var self = this;
    toggle.addEventListener('click', function () {
      self.flame = !self.flame;
      toggle.textContent = self.flame ? 'icicle' : 'flame';
      self.render();
    });
    search.addEventListener('input', function () {
      self.search(search.value);
    });
    this.canvas.addEventListener('click', function (ev) {
      var n = self.nodeAt(ev.target);
      if (!n) return;
      self.zoomTo(n);
      ctx.select(n.scope);
    });
    this.canvas.addEventListener('mousemove', function (ev) {
      var n = self.nodeAt(ev.target);
      if (n) ctx.tooltip.show(ev, self.tree, n);
      else ctx.tooltip.hide();
    });
    this.canvas.addEventListener('mouseleave', function () {
      ctx.tooltip.hide();
    });
    window.addEventListener('resize', function () {
      self.render();
    });
  };

  var proto = bloop.Flame.prototype;

  proto.nodeAt = function (target) {
    var id = target && target.dataset ? target.dataset.node : undefined;
    return id === undefined ? null : this.tree.nodes[+id];
  };

  // setTree shows another tree (thread or metric changed): unzoomed.
  proto.setTree = function (tree) {
    this.tree = tree;
    this.zoom = tree.root;
    this.search(this.pattern || ''); // renders
  };

  proto.zoomTo = function (n) {
    this.zoom = n;
    this.render();
  };

  // render lays out the zoomed frame's ancestors (full width, dimmed),
  // the frame itself and everything below it wide enough to see.
  proto.render = function () {
    var ctx = this.ctx;
    var tree = this.tree;
    // Frames are placed in percent of the graph's width, so that nothing
    // here waits for a layout; the window's width (less the margins)
    // estimates the pixels for the size thresholds.
    var width = Math.max(window.innerWidth - 40, 200);
    var frames = document.createDocumentFragment();
    var path = [];
    for (var a = this.zoom; a; a = a.parent) path.unshift(a);
    var maxDepth = 0;
    var rows = [];
    path.forEach(function (n) {
      rows.push([n, 0, width, n !== path[path.length - 1]]);
    });
    var zoomIncl = Math.max(ctx.incl(tree, this.zoom), 1);
    var scale = width / zoomIncl;
    var walk = function (n, x) {
      var cx = x;
      n.kids.forEach(function (c) {
        var w = ctx.incl(tree, c) * scale;
        if (w >= MIN_WIDTH) {
          rows.push([c, cx, w, false]);
          walk(c, cx);
        }
        cx += w;
      });
    };
    walk(this.zoom, 0);
    var re = this.re instanceof RegExp ? this.re : null;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      var n = r[0];
      maxDepth = Math.max(maxDepth, n.depth);
      var kind = n.scope >= 0 ? ctx.sc.kind(n.scope) : E.proc;
      var text = r[2] >= MIN_TEXT;
      var f = bloop.el('div', 'fr k-' + bloop.enumName(E, kind) + (r[3] ? ' above' : '') + (text ? ' tx' : ''), text ? ctx.label(n) : null);
      f.dataset.node = n.id;
      f.style.left = ((100 * r[1]) / width).toFixed(3) + '%';
      f.style.width = 'calc(' + ((100 * r[2]) / width).toFixed(3) + '% - 1px)';
      f.style.setProperty('--y', n.depth);
      f.style.backgroundColor = bloop.frameColor(kind, n.scope >= 0 ? ctx.sc.name(n.scope) : '');
      if (re && ctx.matches(n, re)) f.classList.add('hit');
      frames.appendChild(f);
    }
    this.canvas.classList.toggle('flame', this.flame);
    this.canvas.classList.toggle('searching', !!re);
    this.canvas.style.setProperty('--rows', maxDepth + 1);
    this.canvas.style.height = (maxDepth + 1) * ROW + 'px';
    this.canvas.replaceChildren(frames);
    this.renderCrumbs(path);
  };

  proto.renderCrumbs = function (path) {
    var self = this;
    var items = path.map(function (n, i) {
      var b = bloop.el('button', 'crumb', self.ctx.label(n));
      b.disabled = i === path.length - 1;
      b.addEventListener('click', function () {
        self.zoomTo(n);
      });
      return b;
    });
    this.crumbs.replaceChildren.apply(this.crumbs, items);
  };

  // search highlights the frames whose scope matches and says what share
  // of the tree's samples they cover (a match below a match counts once).
  proto.search = function (pattern) {
    var ctx = this.ctx;
    var tree = this.tree;
    this.pattern = pattern;
    this.re = bloop.regex(pattern);
    if (this.re instanceof Error) {
      this.info.textContent = 'bad expression: ' + this.re.message;
      this.info.className = 'info error';
      this.re = null;
      this.render();
      return;
    }
    this.info.className = 'info';
    if (!this.re) {
      this.info.textContent = '';
      this.render();
      return;
    }
    var re = this.re;
    var frames = 0;
    var covered = 0;
    var walk = function (n) {
      if (ctx.matches(n, re)) {
        frames++;
        covered += ctx.incl(tree, n);
        countBelow(n);
        return;
      }
      n.kids.forEach(walk);
    };
    var countBelow = function (n) {
      n.kids.forEach(function (c) {
        if (ctx.matches(c, re)) frames++;
        countBelow(c);
      });
    };
    walk(tree.root);
    var total = ctx.total();
    this.info.textContent = frames + ' frames match: ' + bloop.pct(covered, total) + ' of the samples (' + ctx.valueUnit(covered) + ')';
    this.info.dataset.share = total > 0 ? covered / total : 0;
    this.render();
  };

  // frameColor tells the kinds apart by hue (procedures warm, inlined
  // calls blue, loops green) and frames of one kind by a lightness that a
  // hash of the name sets, so that neighbours differ.
  bloop.frameColor = function (kind, name) {
    var h = 0;
    for (var i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) | 0;
    var v = Math.abs(h % 20);
    switch (kind) {
      case E.inlined:
        return 'hsl(' + (205 + v) + ',60%,' + (68 + v / 2) + '%)';
      case E.loop:
        return 'hsl(' + (110 + v) + ',45%,' + (62 + v / 2) + '%)';
    }
    return 'hsl(' + (20 + v) + ',80%,' + (62 + v / 2) + '%)';
  };
})();
