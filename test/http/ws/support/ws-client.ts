/** A `ws` client for the stream's tests: keeps every message (pings answered) and lets a test take them in order. */
import WebSocket from "ws"

export class WsClient {
  readonly messages: Array<any> = []
  private taken = 0
  constructor(readonly ws: WebSocket) {
    ws.on("message", (data) => {
      const message = JSON.parse(data.toString())
      if (message.type === "ping") ws.send(JSON.stringify({ type: "pong" }))
      else this.messages.push(message)
    })
  }
  static open(url: string) {
    const ws = new WebSocket(url)
    return new Promise<WsClient>((resolve, reject) => {
      ws.once("open", () => resolve(new WsClient(ws)))
      ws.once("error", reject)
    })
  }
  send(message: unknown) {
    this.ws.send(JSON.stringify(message))
  }
  /** The next message not yet taken; fails after `ms` (a hang, not a timing assertion) or once the socket closed. */
  async next(ms = 30_000): Promise<any> {
    const deadline = Date.now() + ms
    while (this.taken >= this.messages.length) {
      if (Date.now() > deadline) throw new Error("no message")
      if (this.ws.readyState === WebSocket.CLOSED) throw new Error("no message: the socket closed")
      await new Promise((r) => setTimeout(r, 20))
    }
    return this.messages[this.taken++]
  }
  async close() {
    if (this.ws.readyState === WebSocket.CLOSED) return
    await new Promise((resolve) => {
      this.ws.once("close", resolve)
      this.ws.close()
    })
  }
}
