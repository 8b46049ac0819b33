// Run by `npm run build` after the compiler: writes the git commit of the
// source tree to dist/build-info.json for the `build_info` metric
// (build-info.ts). Outside a git checkout it writes no commit, and the
// metric says "unknown" unless BUILD_COMMIT is set.
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BUILD_INFO_FILE, packageRoot } from './build-info'

function gitCommit(root: string): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    return undefined
  }
}

const root = packageRoot()
writeFileSync(join(root, 'dist', BUILD_INFO_FILE), `${JSON.stringify({ commit: gitCommit(root) ?? null })}\n`)
