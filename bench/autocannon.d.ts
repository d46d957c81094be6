/** The part of autocannon 9's programmatic API that bench/api.ts uses (the package ships no types). */
declare module "autocannon" {
  interface Histogram {
    readonly average: number
    readonly max: number
    readonly p50: number
    readonly p90: number
    readonly p97_5: number
    readonly p99: number
    readonly p99_9: number
  }
  interface Result {
    readonly requests: Histogram & { readonly total: number }
    readonly latency: Histogram
    /** Response bytes (headers and bodies). */
    readonly throughput: Histogram & { readonly total: number }
    readonly errors: number
    readonly timeouts: number
    readonly non2xx: number
    readonly duration: number
  }
  interface Options {
    readonly url: string
    readonly connections?: number
    readonly duration?: number
    readonly overallRate?: number
    readonly pipelining?: number
    readonly timeout?: number
    readonly method?: string
    readonly body?: string
    readonly headers?: Readonly<Record<string, string>>
  }
  function autocannon(options: Options): Promise<Result>
  export default autocannon
}
