// A job (JSON on stdin, written by bench/render_comment.py) → screenshots, the final HTML of each
// page, and a JSON report on stdout.
//
// For each page: loads the self-contained source page from a file (every other request is
// refused), renders its ```mermaid blocks with the mermaid package (parse first, then render; a
// failure leaves an error box like GitHub's "Unable to render rich display"), counts the nodes
// and edges of each diagram, measures the page, takes a first-screen and a full-page screenshot,
// collects the text visible in the first screen, and saves the DOM as it was shot (mermaid
// diagrams as inline SVG, no script).
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const job = JSON.parse(readFileSync(0, 'utf8'));
const requireFromTools = createRequire(join(job.toolsDir, 'package.json'));
const { chromium } = requireFromTools('playwright-core');
const mermaidScript = requireFromTools.resolve('mermaid/dist/mermaid.min.js');

const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

// Runs inside the page: renders every .kp-mermaid block and describes each diagram.
async function renderMermaidBlocks() {
  const NODE_SELECTORS = ['g.node', 'rect.actor-top', 'g.mindmap-node', 'rect.task', 'g.commit-bullets > *'];
  const EDGE_SELECTORS = ['path.flowchart-link', 'g.edgePaths > path', 'line.messageLine0', 'line.messageLine1',
    'path.messageLine0', 'path.messageLine1', 'path.relation', 'path.transition'];
  const countFirst = (svg, selectors) => {
    for (const selector of selectors) {
      const count = svg.querySelectorAll(selector).length;
      if (count) return count;
    }
    return 0;
  };
  const countAll = (svg, selectors) => new Set(selectors.flatMap((s) => [...svg.querySelectorAll(s)])).size;
  const errorBox = (message) => {
    const box = document.createElement('div');
    box.className = 'kp-mermaid-error';
    const title = document.createElement('strong');
    title.textContent = 'Unable to render rich display';
    const detail = document.createElement('pre');
    detail.textContent = message;
    box.append(title, detail);
    return box;
  };
  window.mermaid.initialize({ startOnLoad: false, theme: 'default', securityLevel: 'strict' });
  const diagrams = [];
  const blocks = [...document.querySelectorAll('.kp-mermaid')];
  for (const [index, block] of blocks.entries()) {
    const source = block.querySelector('.kp-mermaid-source').textContent;
    const diagram = { index, type: null, nodes: 0, edges: 0, width_px: 0, height_px: 0, error: null };
    try {
      await window.mermaid.parse(source);
      const { svg } = await window.mermaid.render(`kp-mermaid-${index}`, source);
      block.innerHTML = svg;
      const element = block.querySelector('svg');
      const box = element.getBoundingClientRect();
      diagram.type = element.getAttribute('aria-roledescription');
      diagram.nodes = countFirst(element, NODE_SELECTORS);
      diagram.edges = countAll(element, EDGE_SELECTORS);
      diagram.width_px = Math.round(box.width);
      diagram.height_px = Math.round(box.height);
    } catch (error) {
      diagram.error = String((error && error.message) || error).trim();
      block.replaceChildren(errorBox(diagram.error));
    }
    // mermaid leaves its scratch container behind when rendering fails.
    document.querySelectorAll(`#dkp-mermaid-${index}, #kp-mermaid-${index}`).forEach((node) => {
      if (!block.contains(node)) node.remove();
    });
    diagrams.push(diagram);
  }
  return diagrams;
}

// Runs inside the page: the text of the part of the page above `limit` px, block by block.
function visibleText(limit) {
  const isBlock = (element) => !['inline', 'inline-block', 'contents'].includes(getComputedStyle(element).display);
  const blockOf = (element) => {
    let current = element;
    while (current && current !== document.body && !isBlock(current)) current = current.parentElement;
    return current;
  };
  const linesOf = (node, end) => {
    const range = document.createRange();
    range.setStart(node, 0);
    range.setEnd(node, end);
    return range.getClientRects();
  };
  const visiblePrefix = (node) => {
    const whole = linesOf(node, node.length);
    if (!whole.length || whole[0].top >= limit) return '';
    if (whole[whole.length - 1].bottom <= limit) return node.data;
    let low = 0;
    let high = node.length;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      const lines = linesOf(node, middle);
      if (lines.length && lines[lines.length - 1].bottom <= limit) low = middle;
      else high = middle - 1;
    }
    return node.data.slice(0, low);
  };
  const parts = [];
  let lastBlock = null;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT | NodeFilter.SHOW_ELEMENT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.nodeType === Node.ELEMENT_NODE) {
      if (node.tagName === 'BR' && node.getBoundingClientRect().top < limit) parts.push('\n');
      continue;
    }
    // checkVisibility() is false inside a closed <details>, whose content still has layout boxes.
    if (!node.parentElement.checkVisibility({ visibilityProperty: true, opacityProperty: true })) continue;
    const text = visiblePrefix(node).replace(/\s+/g, ' ');
    if (!text) continue;
    const block = blockOf(node.parentElement);
    if (!text.trim()) {
      if (block === lastBlock) parts.push(' '); // the space between two inline elements
      continue;
    }
    if (lastBlock !== null && block !== lastBlock) parts.push('\n');
    parts.push(text);
    lastBlock = block;
  }
  return parts
    .join('')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .join('\n');
}

// Runs inside the page: heights in px of the page's content (not padded to the viewport) and of
// the markdown body.
function measure() {
  const body = document.querySelector('.markdown-body').getBoundingClientRect();
  return {
    page_height_px: Math.ceil(document.body.getBoundingClientRect().height),
    markdown_top_px: Math.round(body.top + window.scrollY),
    markdown_height_px: Math.round(body.height),
  };
}

async function shoot(context, spec) {
  const tab = await context.newPage();
  const consoleErrors = [];
  tab.on('pageerror', (error) => consoleErrors.push(String(error)));
  await tab.goto(pathToFileURL(spec.source).href, { waitUntil: 'load' });
  const script = await tab.addScriptTag({ path: mermaidScript });
  const diagrams = await tab.evaluate(renderMermaidBlocks);
  await script.evaluate((element) => element.remove());
  await tab.evaluate(() => document.fonts.ready);
  const height = job.viewport.height;
  const sizes = await tab.evaluate(measure);
  const firstScreenText = await tab.evaluate(visibleText, height);
  await tab.screenshot({ path: spec.firstScreen, clip: { x: 0, y: 0, width: job.viewport.width, height } });
  await tab.screenshot({ path: spec.full, fullPage: true });
  writeFileSync(spec.html, await tab.content());
  await tab.close();
  return {
    name: spec.name,
    input: spec.input,
    kind: spec.kind,
    mermaid_blocks: diagrams.length,
    mermaid_errors: diagrams.filter((d) => d.error).map((d) => ({ index: d.index, error: d.error })),
    diagrams,
    ...sizes,
    screens: Math.round((sizes.page_height_px / height) * 100) / 100,
    first_screen_text: firstScreenText,
    page_errors: consoleErrors,
    html: spec.html,
    first_screen_png: spec.firstScreen,
    full_png: spec.full,
  };
}

const context = await chromium.launchPersistentContext(job.userDataDir, {
  executablePath: job.chromium,
  headless: true,
  chromiumSandbox: false,
  args: CHROMIUM_FLAGS,
  viewport: job.viewport,
  deviceScaleFactor: 1,
  colorScheme: 'light',
  offline: true,
});
await context.route('**/*', (route) =>
  /^(file|data):/.test(route.request().url()) ? route.continue() : route.abort(),
);
const reports = [];
try {
  for (const spec of job.pages) reports.push(await shoot(context, spec));
} finally {
  await context.close();
}
process.stdout.write(JSON.stringify(reports));
