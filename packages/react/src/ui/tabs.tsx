import { useId, useState, type KeyboardEvent, type ReactNode } from 'react';

export interface TabDef {
  id: string;
  label: string;
  render: () => ReactNode;
}

/** A left navigation of tabs (WAI-ARIA tabs: arrows move, the panel is labelled by its tab). */
export function Tabs(props: { title: string; tabs: TabDef[] }) {
  const [selected, setSelected] = useState(props.tabs[0]?.id ?? '');
  const base = useId();
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
    e.preventDefault();
    const at = props.tabs.findIndex((t) => t.id === selected);
    const next = props.tabs[(at + (e.key === 'ArrowDown' ? 1 : props.tabs.length - 1)) % props.tabs.length]!;
    setSelected(next.id);
    document.getElementById(`${base}-tab-${next.id}`)?.focus();
  };
  const current = props.tabs.find((t) => t.id === selected) ?? props.tabs[0];
  return (
    <>
      <div className="gh-nav">
        <div className="gh-nav-title">{props.title}</div>
        <div role="tablist" aria-orientation="vertical" aria-label={props.title} onKeyDown={onKeyDown} style={{ display: 'flex', flexDirection: 'column', gap: 4 }}>
          {props.tabs.map((tab) => (
            <button key={tab.id} id={`${base}-tab-${tab.id}`} type="button" role="tab" className="gh-tab" aria-selected={tab.id === current?.id} aria-controls={`${base}-panel`} tabIndex={tab.id === current?.id ? 0 : -1} onClick={() => setSelected(tab.id)}>
              {tab.label}
            </button>
          ))}
        </div>
      </div>
      <div className="gh-panel" role="tabpanel" id={`${base}-panel`} aria-labelledby={`${base}-tab-${current?.id}`}>
        {current?.render()}
      </div>
    </>
  );
}
