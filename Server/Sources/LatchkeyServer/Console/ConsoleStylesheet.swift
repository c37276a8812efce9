/// `/admin/console.css`: the console's only style, a file rather than inline so the
/// Content-Security-Policy needs no `'unsafe-inline'`. The charts' colours (`c0`…`c7`) are here.
enum ConsoleStylesheet {
    static let css = """
        :root{--ink:#1d2330;--muted:#5c6578;--line:#d9dde5;--bg:#f6f7f9;--accent:#2456c7;--bad:#b3261e;--ok:#1f7a3a}
        *{box-sizing:border-box}
        body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--ink);background:var(--bg)}
        header{display:flex;flex-wrap:wrap;align-items:center;gap:1rem;padding:.6rem 1.2rem;background:#1d2330;color:#fff}
        header .brand{font-weight:700;letter-spacing:.02em}
        header nav{display:flex;flex-wrap:wrap;gap:.2rem;flex:1}
        header nav a{color:#cfd6e4;text-decoration:none;padding:.25rem .6rem;border-radius:4px}
        header nav a[aria-current=page]{background:#39435a;color:#fff}
        header .who{display:flex;gap:.6rem;align-items:center;color:#cfd6e4}
        main{max-width:1100px;margin:0 auto;padding:1rem 1.2rem 3rem}
        h1{font-size:1.35rem;margin:.4rem 0 1rem}
        h2{font-size:1.05rem;margin:1.6rem 0 .5rem}
        table{width:100%;border-collapse:collapse;background:#fff;border:1px solid var(--line)}
        th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
        th{font-weight:600;color:var(--muted);font-size:.85rem}
        td.detail{font-family:ui-monospace,monospace;font-size:.8rem;word-break:break-all}
        code{font-family:ui-monospace,monospace;font-size:.85em;word-break:break-all}
        a{color:var(--accent)}
        button{font:inherit;padding:.3rem .8rem;border:1px solid #9aa3b5;border-radius:4px;background:#fff;cursor:pointer}
        button:hover{background:#eef1f6}
        .danger button{border-color:var(--bad);color:var(--bad)}
        form{margin:0}
        .actions{display:flex;flex-wrap:wrap;gap:.5rem;margin:.8rem 0}
        .card{background:#fff;border:1px solid var(--line);border-radius:6px;padding:1rem;max-width:40rem}
        .card label{display:block;margin-bottom:.3rem;font-weight:600}
        .card input[type=password],textarea{width:100%;font:13px ui-monospace,monospace;padding:.4rem;border:1px solid #9aa3b5;border-radius:4px}
        .card button{margin-top:.6rem}
        .search{display:flex;gap:.5rem;margin-bottom:1rem}
        .search input{flex:1;padding:.35rem .5rem;font:inherit;border:1px solid #9aa3b5;border-radius:4px}
        .refuse{display:flex;gap:.3rem;margin-top:.3rem}
        .refuse input{min-width:12rem}
        .hint{color:var(--muted)}
        .tag{display:inline-block;padding:0 .4rem;border-radius:3px;background:#e6e9f0;font-size:.8rem}
        .tag.bad{background:#f8dcda;color:var(--bad)}
        .ok{color:var(--ok);background:#e3f3e7;padding:.5rem .8rem;border-radius:4px}
        .error{color:var(--bad);background:#f8dcda;padding:.5rem .8rem;border-radius:4px}
        .filters a{margin-right:.6rem}
        .filters a[aria-current=page]{font-weight:700;text-decoration:none;color:var(--ink)}
        .tiles{display:grid;grid-template-columns:repeat(auto-fit,minmax(10rem,1fr));gap:.8rem;margin-bottom:1rem}
        .tile{background:#fff;border:1px solid var(--line);border-radius:6px;padding:.8rem}
        .tile .value{display:block;font-size:1.6rem;font-weight:700}
        .tile .label{color:var(--muted)}
        section.chart{background:#fff;border:1px solid var(--line);border-radius:6px;padding:.6rem .8rem;margin-bottom:1rem}
        section.chart h2{margin:.2rem 0 .4rem}
        svg.chart{width:100%;height:auto;display:block}
        svg .grid{stroke:#e3e6ec;stroke-width:1}
        svg .axis{fill:#5c6578;font-size:11px}
        svg .empty{fill:#8a93a6;font-size:14px}
        .legend{list-style:none;display:flex;flex-wrap:wrap;gap:.3rem 1rem;padding:0;margin:.3rem 0 0;font-size:.85rem}
        .swatch{display:inline-block;width:.8rem;height:.8rem;border-radius:2px;margin-right:.3rem;vertical-align:-1px}
        .c0{fill:#2456c7;background:#2456c7}.c1{fill:#e07b00;background:#e07b00}.c2{fill:#1f7a3a;background:#1f7a3a}
        .c3{fill:#b3261e;background:#b3261e}.c4{fill:#7b3fb5;background:#7b3fb5}.c5{fill:#0f8a8a;background:#0f8a8a}
        .c6{fill:#8a6d1f;background:#8a6d1f}.c7{fill:#6b7280;background:#6b7280}
        """
}
