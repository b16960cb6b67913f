// The page's side of the engine worker (worker.js): every command is a message, every answer
// a promise. A failed command rejects with the engine's message (and its code).

export class EngineClient {
  constructor() {
    this.worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    this.next = 1;
    this.pending = new Map();
    this.worker.onmessage = (e) => {
      const { id, result, error, code } = e.data;
      const p = this.pending.get(id);
      if (!p) return;
      this.pending.delete(id);
      if (error !== undefined) {
        const err = new Error(error);
        err.code = code;
        p.reject(err);
      } else {
        p.resolve(result);
      }
    };
    // Errors the worker did not answer with (a failed module load): report them on the page.
    this.worker.onerror = (e) => console.error(`engine worker: ${e.message}`);
  }

  call(cmd, ...args) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, cmd, args });
    });
  }

  // Commands sent and not yet answered.
  get inFlight() {
    return this.pending.size;
  }
}
