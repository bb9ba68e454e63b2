// Imports a trace file with speedscope's own importer (the code its web app runs when a file is
// dropped on it) and prints, per imported profile (a pid/tid track), its name and how many
// frames opened with each name, as JSON. Exits non-zero when speedscope cannot import the file
// or warns while importing it (an end without its begin, ...).
// usage: node speedscope_import.mjs VIEWER_DIR TRACE.json
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const [viewerDir, tracePath] = process.argv.slice(2).map((p) => path.resolve(p));
// An error thrown from the bundle would print its whole minified line: a short message instead.
const die = (e) => {
  process.stderr.write(`speedscope_import: ${String(e && e.stack || e).split('\n').slice(0, 3).join(' | ').slice(0, 600)}\n`);
  process.exit(2);
};
process.on('uncaughtException', die);
process.on('unhandledRejection', die);
const require = createRequire(path.join(viewerDir, 'package.json'));
const { JSDOM, VirtualConsole } = require('jsdom');

const releaseDir = path.join(viewerDir, 'node_modules/speedscope/dist/release');
const bundle = fs.readdirSync(releaseDir).find((f) => /^speedscope-.*\.js$/.test(f));
let source = fs.readFileSync(path.join(releaseDir, bundle), 'utf8');
// speedscope 1.25.0's lazily loaded importer module; the bundle keeps it in this variable.
const hook = 'var jr=Promise.resolve().then(()=>(Sf(),kf));';
if (!source.includes(hook)) {
  console.error(`speedscope_import: ${bundle} is not speedscope 1.25.0's bundle (importer not found)`);
  process.exit(2);
}
source = source.replace(hook, hook + 'globalThis.__gpubtImporter=jr;');

// The app renders into the page too; no canvas here, so its drawing fails: that is not the
// importer's business, and its noise is dropped.
const dom = new JSDOM('<!doctype html><html><body></body></html>', {
  url: 'http://localhost/', pretendToBeVisual: true, runScripts: 'outside-only',
  virtualConsole: new VirtualConsole(),
});
dom.window.matchMedia = () => ({ matches: false, addEventListener() {}, removeEventListener() {} });
dom.window.HTMLCanvasElement.prototype.getContext = () => null;
Object.assign(dom.window, { TextDecoder, TextEncoder });
const realConsole = { log: console.log, warn: console.warn, error: console.error };
const quiet = () => {};
console.log = console.warn = console.error = quiet;
try {
  dom.window.eval(source);
} catch (e) {
  // the app's first render; the importer is defined before it
}
const importer = await dom.window.__gpubtImporter;

const warnings = [];
const collect = (...args) => warnings.push(args.map(String).join(' '));
dom.window.console.warn = collect;
dom.window.console.error = collect;
let group;
try {
  group = await importer.importProfileGroupFromText(path.basename(tracePath),
                                                    fs.readFileSync(tracePath, 'utf8'));
} finally {
  Object.assign(console, realConsole);
}
if (!group) {
  console.error(`speedscope could not import ${tracePath}`);
  process.exit(1);
}
const profiles = group.profiles.map((p) => {
  const frames = {};
  p.forEachCall((node) => { frames[node.frame.name] = (frames[node.frame.name] || 0) + 1; }, () => {});
  return { name: p.getName(), frames };
});
process.stdout.write(JSON.stringify({ profiles, warnings }) + '\n');
process.exit(warnings.length ? 1 : 0);
