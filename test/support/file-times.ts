/**
 * A vitest reporter that prints, when the run ends, each project's files by time (slowest first)
 * and each project's total: the end of a CI log then says where the suite's minutes went, which
 * the default reporter's tail does not (it names only slow tests of the last files).
 *
 * Times are each file's own (collect + tests); projects run side by side, so the wall time of the
 * run is about the largest of (the "chain" lane's total) and (the "rest" total / its forks).
 */
import * as Path from "node:path"
import type { Reporter, TestModule } from "vitest/node"

export default class FileTimes implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>) {
    const byProject = new Map<string, Array<{ file: string; ms: number }>>()
    for (const module of modules) {
      const diagnostic = module.diagnostic()
      const ms = diagnostic.duration + diagnostic.collectDuration
      const project = module.project.name || "default"
      const list = byProject.get(project) ?? []
      list.push({ file: Path.relative(process.cwd(), module.moduleId), ms })
      byProject.set(project, list)
    }
    const lines = ["", "file times (collect + tests), slowest first:"]
    for (const [project, list] of [...byProject].sort()) {
      list.sort((a, b) => b.ms - a.ms)
      const total = list.reduce((sum, entry) => sum + entry.ms, 0)
      lines.push(`  ${project}: ${list.length} files, ${(total / 1000).toFixed(1)} s in all`)
      for (const entry of list.slice(0, 25)) lines.push(`    ${(entry.ms / 1000).toFixed(1).padStart(7)} s  ${entry.file}`)
    }
    process.stdout.write(lines.join("\n") + "\n")
  }
}
