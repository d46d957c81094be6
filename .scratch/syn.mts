import { generateSynthetic } from "../tools/recording/synthetic.ts"
const s = await generateSynthetic({ out: "/tmp/wc-syn.ndjson.gz", seed: 31, events: 30_000, users: 80, reorgEvery: 400 })
console.log({ ...s, deployment: undefined })
