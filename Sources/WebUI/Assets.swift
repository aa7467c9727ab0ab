// SPDX-License-Identifier: Apache-2.0
/// The page's only style and script, served by the Pi itself (it is often offline): a few KB.
enum Assets {
    static let css = """
        *{box-sizing:border-box}
        html{-webkit-text-size-adjust:100%}
        body{margin:0;font:17px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#111;color:#eee;overflow-wrap:anywhere}
        nav{display:flex;flex-wrap:wrap;gap:4px;padding:6px;background:#222;position:sticky;top:0}
        nav a{flex:1 1 auto;text-align:center;padding:10px 6px;border-radius:6px;color:#ddd;text-decoration:none;background:#2c2c2c;font-size:15px}
        nav a[aria-current]{background:#f5a623;color:#111;font-weight:600}
        main{max-width:40rem;margin:0 auto;padding:8px 14px 40px}
        h1{font-size:1.5rem;margin:12px 0}
        h2{font-size:1.15rem;margin:22px 0 8px}
        a{color:#f5a623}
        .big{font-size:1.35rem;font-weight:700;padding:12px;border-radius:8px;margin:8px 0}
        .ok{color:#7bd88f}.warn{color:#f5c542}.bad{color:#ff6b6b}
        .big.ok{background:#17361f}.big.bad{background:#451818}.big.warn{background:#3d3310}
        p.ok,p.bad{font-weight:600}
        dl{margin:8px 0}dl div{display:flex;gap:10px;padding:10px 0;border-bottom:1px solid #333}
        dt{flex:0 0 5.5rem;color:#aaa}dd{margin:0;flex:1;min-width:0}
        dl div.ok dd{color:#eee}
        .list{list-style:none;padding:0;margin:0}.list li{padding:10px 0;border-bottom:1px solid #333}
        ol.list{counter-reset:n}ol.list li b::before{counter-increment:n;content:counter(n) ". "}
        .row{display:flex;flex-wrap:wrap;gap:8px;margin-top:6px;align-items:end}
        form{margin:8px 0}.row form{margin:0}
        label{display:block;margin:10px 0;color:#ccc}
        input,select,textarea{display:block;width:100%;max-width:100%;font:inherit;padding:10px;margin-top:4px;border-radius:6px;border:1px solid #555;background:#1b1b1b;color:#eee}
        .row label{flex:1 1 8rem;margin:0}
        button,.button{display:inline-block;font:inherit;font-weight:600;padding:12px 16px;min-height:44px;border:0;border-radius:8px;background:#f5a623;color:#111;text-decoration:none;cursor:pointer}
        .danger button{background:#5a2121;color:#fff}
        .small{font-size:14px;color:#aaa}
        code{background:#222;padding:1px 4px;border-radius:4px}
        img.card{width:100%;height:auto;background:#fff;border-radius:6px}
        """

    /// Keeps each `data-live` part fresh (every second): the status, the button check.
    static let js = """
        "use strict";
        document.querySelectorAll("[data-live]").forEach(function (part) {
          function tick() {
            fetch(part.dataset.live, {cache: "no-store", credentials: "same-origin"}).then(function (r) {
              if (r.status === 401) { location.reload(); return; }
              return r.text().then(function (html) { part.innerHTML = html; });
            }).catch(function () {
              part.innerHTML = '<p class="big bad">The Pi does not answer: is this phone still on its Wi-Fi?</p>';
            }).finally(function () { setTimeout(tick, 1000); });
          }
          setTimeout(tick, 1000);
        });
        """
}
