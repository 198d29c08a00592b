/**
 * A live, selectable list for the terminal: it reloads its items every `intervalMs`
 * (one load at a time, never overlapping), keeps the selection on the same item while
 * items arrive or leave around it, moves with ↑/↓ or j/k, and runs per-item actions
 * bound to a key, each behind a y/n confirmation. `q` quits. The data source and the
 * actions are plain async functions, so the list knows nothing of HTTP.
 */
import { Box, Text, useApp, useInput, type Key } from 'ink';
import { useCallback, useEffect, useReducer, useRef, useState, type ReactNode } from 'react';

export interface LiveAction<T> {
  /** the key that starts it, e.g. "a" */
  key: string;
  /** shown in the help line, e.g. "approve" */
  label: string;
  /** the y/n question asked before running it */
  question: (item: T) => string;
  /** does it; a rejection is shown and the item stays */
  run: (item: T) => Promise<void>;
  /** what to say once it is done */
  done: (item: T) => string;
}

export interface LiveListProps<T> {
  title: string;
  load: () => Promise<readonly T[]>;
  keyOf: (item: T) => string;
  renderItem: (item: T, selected: boolean) => ReactNode;
  actions: readonly LiveAction<T>[];
  /** items already loaded, shown before the first reload */
  initial?: readonly T[];
  intervalMs?: number;
  empty?: string;
  /** how a failed load or action is told */
  errorText?: (err: unknown) => string;
}

// ---- the selection: by key, so it stays on the same item when the list changes ----

export interface ListState<T> {
  items: readonly T[];
  /** the selected item's key, and where it was (used when it leaves) */
  selected: { key: string | undefined; index: number };
}

export type ListEvent<T> =
  | { type: 'loaded'; items: readonly T[] }
  | { type: 'move'; by: number }
  | { type: 'remove'; key: string };

function select<T>(items: readonly T[], keyOf: (item: T) => string, index: number): ListState<T>['selected'] {
  const i = Math.max(0, Math.min(index, items.length - 1));
  const item = items[i];
  return { key: item === undefined ? undefined : keyOf(item), index: i };
}

export function listReducer<T>(keyOf: (item: T) => string) {
  return (state: ListState<T>, event: ListEvent<T>): ListState<T> => {
    switch (event.type) {
      case 'loaded': {
        const at = state.selected.key === undefined ? -1 : event.items.findIndex((i) => keyOf(i) === state.selected.key);
        // still there: follow it; gone: the item now at its place
        return { items: event.items, selected: select(event.items, keyOf, at >= 0 ? at : state.selected.index) };
      }
      case 'move':
        return { ...state, selected: select(state.items, keyOf, state.selected.index + event.by) };
      case 'remove': {
        const items = state.items.filter((i) => keyOf(i) !== event.key);
        return listReducer(keyOf)({ ...state, items }, { type: 'loaded', items });
      }
    }
  };
}

const defaultErrorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

export function LiveList<T>(props: LiveListProps<T>): ReactNode {
  const { keyOf, actions, intervalMs = 500, errorText = defaultErrorText } = props;
  const { exit } = useApp();
  const [state, dispatch] = useReducer(listReducer(keyOf), undefined, () => {
    const items = props.initial ?? [];
    return { items, selected: select(items, keyOf, 0) };
  });
  const [loadError, setLoadError] = useState<string>();
  const [confirming, setConfirming] = useState<{ action: LiveAction<T>; item: T }>();
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ text: string; error?: boolean }>();
  // items acted on: a reload that started before the action must not bring them back
  const gone = useRef(new Set<string>());
  const load = useRef(props.load);
  load.current = props.load;

  useEffect(() => {
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    const tick = async () => {
      try {
        const items = await load.current();
        if (stopped) return;
        dispatch({ type: 'loaded', items: items.filter((i) => !gone.current.has(keyOf(i))) });
        setLoadError(undefined);
      } catch (err) {
        if (!stopped) setLoadError(errorText(err));
      }
      if (!stopped) timer = setTimeout(tick, intervalMs);
    };
    // with initial items the first reload waits one interval; without, it starts now
    timer = setTimeout(tick, props.initial ? intervalMs : 0);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
    // one loop per mounted list; `load` is read through a ref so a new function does not restart it
  }, [intervalMs]);

  const current = state.items[state.selected.index];

  const runAction = async (action: LiveAction<T>, item: T) => {
    setBusy(true);
    setMessage({ text: `${action.label}…` });
    try {
      await action.run(item);
      const key = keyOf(item);
      gone.current.add(key);
      dispatch({ type: 'remove', key });
      setMessage({ text: action.done(item) });
    } catch (err) {
      setMessage({ text: errorText(err), error: true });
    } finally {
      setBusy(false);
    }
  };

  const onKey = (input: string, key: Key) => {
    if (confirming) {
      if (input === 'y' || input === 'Y') {
        setConfirming(undefined);
        void runAction(confirming.action, confirming.item);
      } else if (input === 'n' || input === 'N' || key.escape) {
        setConfirming(undefined);
        setMessage({ text: 'cancelled' });
      }
      return;
    }
    if (input === 'q') {
      exit();
      return;
    }
    if (busy) return;
    if (key.upArrow || input === 'k') dispatch({ type: 'move', by: -1 });
    else if (key.downArrow || input === 'j') dispatch({ type: 'move', by: 1 });
    else {
      const action = actions.find((a) => a.key === input);
      if (action && current !== undefined) {
        setMessage(undefined);
        setConfirming({ action, item: current });
      }
    }
  };
  // ink re-subscribes a changed handler only after the render is on screen: a stable
  // handler reading the latest one through a ref acts on what the person sees
  const latestOnKey = useRef(onKey);
  latestOnKey.current = onKey;
  useInput(useCallback((input: string, key: Key) => latestOnKey.current(input, key), []));

  const help = ['↑/↓ or j/k move', ...actions.map((a) => `${a.key} ${a.label}`), 'q quit'].join(' · ');
  return (
    <Box flexDirection="column">
      <Text bold>
        {props.title} ({state.items.length})
      </Text>
      {state.items.length === 0 ? (
        <Text dimColor>{props.empty ?? '(none)'}</Text>
      ) : (
        state.items.map((item, i) => (
          <Box key={keyOf(item)}>
            <Text color={i === state.selected.index ? 'cyan' : undefined}>{i === state.selected.index ? '› ' : '  '}</Text>
            <Box flexDirection="column">{props.renderItem(item, i === state.selected.index)}</Box>
          </Box>
        ))
      )}
      {loadError ? <Text color="red">cannot refresh: {loadError}</Text> : null}
      {confirming ? (
        <Text color="yellow">{confirming.action.question(confirming.item)} (y/n)</Text>
      ) : message ? (
        <Text color={message.error ? 'red' : 'green'}>{message.text}</Text>
      ) : null}
      <Text dimColor>{help}</Text>
    </Box>
  );
}
