// The dashboard's widgets as anywidget modules: each of `lib/widgets/{events,gate,budget,
// controls}.js` (compiled by `tsc` from `src/widgets/`) bundled with what it imports into
// one ES module, `lightscientist_jupyter/jupyter/dashboard/static/<name>.js`, which the
// Python widget loads as its `_esm`. Build output only: nothing in `static/` is written by
// hand. The widgets import only this extension's own modules; a module from node_modules
// (a JupyterLab package, which a widget's module cannot reach) fails the build.
import { rspack } from '@rspack/core';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.resolve(
  here,
  '../lightscientist_jupyter/jupyter/dashboard/static'
);
const names = [
  'events',
  'gate',
  'budget',
  'controls',
  'handoff',
  'graph',
  'tree'
];
const banner =
  'Built by `jlpm build:widgets` from labextension/src/widgets/[name].ts; do not edit.';

const compiler = rspack({
  mode: 'production',
  context: here,
  entry: Object.fromEntries(names.map(n => [n, `./lib/widgets/${n}.js`])),
  output: {
    path: out,
    filename: '[name].js',
    module: true,
    library: { type: 'module' },
    clean: true
  },
  experiments: { outputModule: true },
  optimization: { minimize: false, splitChunks: false, runtimeChunk: false },
  devtool: false,
  plugins: [new rspack.BannerPlugin({ banner })]
});

compiler.run((error, stats) => {
  compiler.close(() => {});
  if (error || stats.hasErrors()) {
    console.error(error ?? stats.toString({ all: false, errors: true }));
    process.exit(1);
  }
  const foreign = stats
    .toJson({ all: false, modules: true })
    .modules.map(m => m.name ?? '')
    .filter(name => name.includes('node_modules'));
  if (foreign.length) {
    console.error(
      "the dashboard widgets must import only the extension's own modules; bundled:\n" +
        foreign.join('\n')
    );
    process.exit(1);
  }
  // tsc's map comments came along from lib/; the modules ship without maps
  for (const name of names) {
    const file = path.join(out, `${name}.js`);
    const text = fs.readFileSync(file, 'utf-8');
    fs.writeFileSync(file, text.replace(/^\/\/# sourceMappingURL=.*$/gm, ''));
  }
  const sizes = names.map(
    n => `${n}.js ${fs.statSync(path.join(out, `${n}.js`)).size} B`
  );
  console.log(
    `dashboard widgets built into ${path.relative(process.cwd(), out)}: ${sizes.join(', ')}`
  );
});
