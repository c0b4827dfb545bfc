// The dashboard's only script, served as /ui/app.js: plain browser JavaScript, no framework. It
// follows the API's watches (pods, devices, events) and re-renders the section a change touches
// from /ui/parts/NAME, streams logs, and sends restarts and desired values through the ordinary API
// (so the guard authorizes and audits them like any other call).
export const APP_JS = String.raw`(function () {
  'use strict';
  var H = { 'X-Requested-With': 'outpost-ui' };
  var role = document.querySelector('main').getAttribute('data-role');
  var toast = document.getElementById('toast');
  var timer = null;
  function say(text, bad) {
    toast.textContent = text;
    toast.className = bad ? 'bad' : 'ok';
    toast.hidden = false;
    clearTimeout(timer);
    timer = setTimeout(function () { toast.hidden = true; }, 6000);
  }
  function statusText(res, body) {
    try { var s = JSON.parse(body); if (s && s.message) return s.message; } catch (e) {}
    return res.status + ' ' + res.statusText;
  }

  // ---- sections refreshed from the server's rendering ----
  var pending = {};
  function refresh(name) {
    if (pending[name]) return;
    pending[name] = setTimeout(function () {
      var el = document.querySelector('[data-part="' + name + '"]');
      // Never pull a form from under someone using it (an unsent value, or its answer being read); retry
      // when they leave it (or at the next change). Asked again when the new rendering arrives: a
      // value chosen while it was on its way would be lost with the form it was chosen in.
      function inUse() {
        if (!el || !(el.querySelector('form[data-dirty]') || el.contains(document.activeElement) && document.activeElement.closest('form'))) return false;
        pending[name] = null;
        el.addEventListener('focusout', function () { refresh(name); }, { once: true });
        return true;
      }
      if (!el) { pending[name] = null; return; }
      if (inUse()) return;
      fetch('/ui/parts/' + name, { credentials: 'same-origin' }).then(function (res) {
        return res.ok ? res.text() : null;
      }).then(function (html) {
        if (inUse()) return;
        pending[name] = null;
        if (html === null) return;
        var tpl = document.createElement('template');
        tpl.innerHTML = html;
        var fresh = tpl.content.firstElementChild;
        var open = el.querySelector('details[open]');
        if (open && fresh.querySelector('details')) fresh.querySelector('details').open = true;
        el.replaceWith(fresh);
      }, function () { pending[name] = null; });
    }, 150);
  }

  // ---- watches: one JSON event per line; reconnect from the last resourceVersion ----
  var live = document.getElementById('live');
  var streams = 0;
  function watch(path, parts) {
    var rv = '';
    function start() {
      fetch(path + '?watch=true&allowWatchBookmarks=true' + (rv ? '&resourceVersion=' + rv : ''), { credentials: 'same-origin' })
        .then(function (res) {
          if (res.status === 410) { rv = ''; parts.forEach(refresh); throw new Error('expired'); }
          if (!res.ok || !res.body) throw new Error('watch ' + res.status);
          streams++; live.classList.add('on');
          var reader = res.body.getReader();
          var dec = new TextDecoder();
          var buf = '';
          function pump() {
            return reader.read().then(function (r) {
              if (r.done) return;
              buf += dec.decode(r.value, { stream: true });
              var i;
              while ((i = buf.indexOf('\n')) >= 0) {
                var line = buf.slice(0, i); buf = buf.slice(i + 1);
                if (!line.trim()) continue;
                try {
                  var ev = JSON.parse(line);
                  if (ev.object && ev.object.metadata && ev.object.metadata.resourceVersion) rv = ev.object.metadata.resourceVersion;
                  if (ev.type !== 'BOOKMARK') parts.forEach(refresh);
                } catch (e) {}
              }
              return pump();
            });
          }
          return pump().finally(function () { if (--streams === 0) live.classList.remove('on'); });
        })
        .catch(function () {})
        .then(function () { setTimeout(start, 2000); });
    }
    start();
  }
  watch('/api/v1/pods', ['pods', 'summary']);
  watch('/apis/devices.kubeedge.io/v1beta1/devices', ['devices']);
  watch('/api/v1/events', ['events'].concat(role === 'admin' ? ['audit'] : []));
  // Module health has no watch: refresh the summary now and then.
  setInterval(function () { refresh('summary'); }, 5000);

  // ---- logs ----
  var panel = document.getElementById('logs');
  var text = document.getElementById('logs-text');
  var select = document.getElementById('logs-container');
  var follow = document.getElementById('logs-follow');
  var title = document.getElementById('logs-title');
  var current = null;
  var abort = null;
  function stream() {
    if (abort) abort.abort();
    abort = new AbortController();
    var parts = current.split('/');
    var url = '/api/v1/namespaces/' + encodeURIComponent(parts[0]) + '/pods/' + encodeURIComponent(parts[1]) +
      '/log?tailLines=200&container=' + encodeURIComponent(select.value) + (follow.checked ? '&follow=true' : '');
    text.textContent = '';
    text.setAttribute('data-state', 'loading');
    fetch(url, { credentials: 'same-origin', signal: abort.signal }).then(function (res) {
      if (!res.ok) return res.text().then(function (b) { text.textContent = statusText(res, b); text.setAttribute('data-state', 'error'); });
      text.setAttribute('data-state', 'streaming');
      var reader = res.body.getReader();
      var dec = new TextDecoder();
      function pump() {
        return reader.read().then(function (r) {
          if (r.done) { text.setAttribute('data-state', 'ended'); return; }
          var stick = text.scrollTop + text.clientHeight >= text.scrollHeight - 4;
          text.textContent += dec.decode(r.value, { stream: true });
          if (text.textContent.length > 400000) text.textContent = text.textContent.slice(-300000);
          if (stick) text.scrollTop = text.scrollHeight;
          return pump();
        });
      }
      return pump();
    }).catch(function () {});
  }
  document.addEventListener('click', function (e) {
    var b = e.target.closest('button');
    if (!b) return;
    if (b.hasAttribute('data-logs')) {
      current = b.getAttribute('data-logs');
      title.textContent = current;
      select.innerHTML = '';
      b.getAttribute('data-containers').split(',').forEach(function (c) {
        var o = document.createElement('option'); o.value = c; o.textContent = c; select.appendChild(o);
      });
      panel.hidden = false;
      stream();
    } else if (b.id === 'logs-close') {
      if (abort) abort.abort();
      panel.hidden = true;
    } else if (b.hasAttribute('data-restart')) {
      var p = b.getAttribute('data-restart').split('/');
      if (!confirm('Restart pod ' + p[1] + ' in ' + p[0] + '?')) return;
      b.disabled = true;
      fetch('/api/v1/namespaces/' + encodeURIComponent(p[0]) + '/pods/' + encodeURIComponent(p[1]) + '/restart', {
        method: 'POST', credentials: 'same-origin', headers: H,
      }).then(function (res) {
        return res.text().then(function (body) {
          b.disabled = false;
          if (res.ok) say('Restarted ' + p[1] + ': ' + JSON.parse(body).stopped.map(function (s) { return s.container; }).join(', '));
          else say('Restart of ' + p[1] + ' failed: ' + statusText(res, body), true);
        });
      });
    }
  });
  select.addEventListener('change', stream);
  follow.addEventListener('change', stream);

  // ---- desired values: read the device, set the one value, merge-patch it back ----
  function dirty(e) {
    var f = e.target.closest && e.target.closest('form.desired');
    if (f) f.setAttribute('data-dirty', '1');
  }
  document.addEventListener('input', dirty, true);
  document.addEventListener('change', dirty, true);
  document.addEventListener('submit', function (e) {
    var f = e.target.closest('form.desired');
    if (!f) return;
    e.preventDefault();
    var out = f.querySelector('output');
    var d = f.getAttribute('data-device').split('/');
    var prop = f.getAttribute('data-property');
    var value = f.elements.value.value;
    var url = '/apis/devices.kubeedge.io/v1beta1/namespaces/' + encodeURIComponent(d[0]) + '/devices/' + encodeURIComponent(d[1]);
    out.className = ''; out.textContent = '\u2026'; // ASCII: see scripts/build.mjs
    // Read-modify-write with the resourceVersion; a conflict (the mapper's reports move the device
    // on) is read again and retried, as client-go's RetryOnConflict does.
    function attempt(left) {
      return fetch(url, { credentials: 'same-origin' }).then(function (res) { return res.json(); }).then(function (dev) {
        var props = (dev.spec.properties || []).map(function (p) {
          if (p.name !== prop) return p;
          var q = Object.assign({}, p); q.desired = Object.assign({}, p.desired || {}, { value: value }); return q;
        });
        return fetch(url, {
          method: 'PATCH', credentials: 'same-origin',
          headers: Object.assign({ 'Content-Type': 'application/merge-patch+json' }, H),
          body: JSON.stringify({ metadata: { resourceVersion: dev.metadata.resourceVersion }, spec: { properties: props } }),
        });
      }).then(function (res) {
        return res.status === 409 && left > 0 ? attempt(left - 1) : res;
      });
    }
    attempt(10).then(function (res) {
      return res.text().then(function (body) {
        if (res.ok) { out.className = 'ok'; out.textContent = 'applied'; f.removeAttribute('data-dirty'); }
        else { out.className = 'bad'; out.textContent = statusText(res, body); }
      });
    }, function (err) { out.className = 'bad'; out.textContent = String(err); });
  });
})();
`;
