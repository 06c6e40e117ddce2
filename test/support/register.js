/**
 * Tiny require hook: lets child processes of tests (and scripts) load TypeScript through
 * @swc/core's transformSync, with the same settings as jest.config.js and the
 * `nestjs-priority-queue` path alias. Use: `node -r ./test/support/register.js file.ts`.
 */
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const { transformSync } = require('@swc/core');

const root = path.resolve(__dirname, '..', '..');
const libSrc = path.join(root, 'libs', 'priority-queue', 'src');

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (request === 'nestjs-priority-queue') request = libSrc;
  else if (request.startsWith('nestjs-priority-queue/')) request = path.join(libSrc, request.slice(22));
  return resolve.call(this, request, parent, ...rest);
};

require.extensions['.ts'] = function (module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const { code } = transformSync(source, {
    filename,
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  });
  module._compile(code, filename);
};
