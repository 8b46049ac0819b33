// Each build's folder says how Node should load its .js files: the package
// itself is CommonJS, its ESM build is marked as modules.
const { writeFileSync } = require('node:fs')
const { join } = require('node:path')

writeFileSync(join(__dirname, 'dist', 'esm', 'package.json'), '{ "type": "module" }\n')
writeFileSync(join(__dirname, 'dist', 'cjs', 'package.json'), '{ "type": "commonjs" }\n')
