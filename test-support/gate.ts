// A promise a test opens by hand: one side waits at `opened`, the other calls `open()` when the
// moment it stands for has come (an ordering test holds a store, a lock or a stream there).

export interface Gate {
  readonly opened: Promise<void>;
  readonly open: () => void;
}

export function gate(): Gate {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}
