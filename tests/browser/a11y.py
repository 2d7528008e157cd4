"""Computed-contrast and target-size checks run inside the page (WCAG 2.2 AA: 1.4.3 contrast, 2.5.8 target size).

Contrast is measured between each visible text element's computed colour and
the first opaque background behind it (alpha blended on the way down), with
the 3:1 allowance for large text. Targets are links, buttons, inputs,
summaries and focusable elements; links inside running text are exempt, as
2.5.8 allows.
"""

from __future__ import annotations

CHECK = r"""(scope) => {
  const parse = c => { const m = c.match(/rgba?\(([^)]+)\)/); if (!m) return null;
    const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const lum = ([r, g, b]) => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const blend = (top, under) => [0, 1, 2].map(i => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
  const background = el => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let color = [255, 255, 255, 1];
    if (!layers.length || layers[layers.length - 1][3] < 1) color = parse(getComputedStyle(document.documentElement).backgroundColor) || color;
    for (let i = layers.length - 1; i >= 0; i--) color = blend(layers[i], color);
    return color;
  };
  const visible = el => { const r = el.getBoundingClientRect(), s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== "hidden" && s.display !== "none" && !el.closest(".sr-only") && Number(s.opacity) > 0.5; };
  const problems = [];
  const root = document.querySelector(scope) || document.body;
  for (const el of root.querySelectorAll("*")) {
    if (!visible(el) || el.closest("[disabled]")) continue;
    const text = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.nodeValue).join("").trim();
    if (!text) continue;
    const s = getComputedStyle(el), fg0 = parse(s.color), bg = background(el);
    const fg = blend(fg0, bg), a = lum(fg), b = lum(bg);
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const size = parseFloat(s.fontSize), large = size >= 24 || (size >= 18.66 && Number(s.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5) - 0.01) problems.push(`contrast ${ratio.toFixed(2)}:1 for ${el.tagName.toLowerCase()}.${el.className} "${text.slice(0, 30)}"`);
  }
  for (const el of root.querySelectorAll("a[href], button, input:not([type=hidden]), select, summary, [tabindex]:not([tabindex='-1'])")) {
    if (!visible(el)) continue;
    const box = el.getBoundingClientRect();
    if (box.width >= 23.5 && box.height >= 23.5) continue;
    const block = el.tagName === "A" && el.closest("p, blockquote, td, th, dd, .card-excerpt, .source-quote, .doc li, .lead");
    if (block && block.textContent.trim().length > el.textContent.trim().length) continue;  // a link in running text
    problems.push(`target ${Math.round(box.width)}x${Math.round(box.height)} for ${el.tagName.toLowerCase()}.${el.className} "${el.textContent.trim().slice(0, 30)}"`);
  }
  return problems;
}"""


def problems(page, scope: str = "body") -> list[str]:  # noqa: ANN001
    """Every contrast and target-size failure on the page as it is rendered now."""
    return page.evaluate(CHECK, scope)
