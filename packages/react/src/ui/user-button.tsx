import { useState } from 'react';
import { useGatehouse, useGatehouseState, type Appearance } from '../context.js';
import { useMenu } from './menu.js';
import { Avatar, displayName, go, Root } from './primitives.js';
import { UserProfile } from './user-profile.js';

export interface UserButtonProps {
  /** Where to go after signing out. */
  afterSignOutUrl?: string;
  /** A page with <UserProfile/>; without it "Manage account" opens the profile in a dialog. */
  userProfileUrl?: string;
  appearance?: Appearance;
}

/** The signed-in user's avatar, opening a menu: manage account, sign out. */
export function UserButton(props: UserButtonProps) {
  const client = useGatehouse();
  const state = useGatehouseState();
  const menu = useMenu();
  const [profileOpen, setProfileOpen] = useState(false);
  if (!state.isSignedIn || !state.user) return null;
  const user = state.user;
  const name = displayName(user);
  return (
    <Root appearance={props.appearance}>
      <div className="gh-popover-anchor" ref={menu.anchor} onKeyDown={menu.onKeyDown} data-gh-component="user-button">
        <button ref={menu.trigger} type="button" className="gh-trigger" aria-haspopup="menu" aria-expanded={menu.open} aria-label={`Account menu for ${name}`} onClick={() => menu.setOpen(!menu.open)}>
          <Avatar imageUrl={user.imageUrl} name={name} size={32} />
        </button>
        {menu.open ? (
          <div className="gh-menu gh-end" role="menu" aria-label="Account">
            <div className="gh-menu-header">
              <Avatar imageUrl={user.imageUrl} name={name} size={40} />
              <div style={{ minWidth: 0 }}>
                <div className="gh-name gh-ellipsis">{name}</div>
                <div className="gh-muted gh-ellipsis">{user.email}</div>
              </div>
            </div>
            <button type="button" role="menuitem" className="gh-menu-item" onClick={() => (menu.setOpen(false), props.userProfileUrl ? go(props.userProfileUrl) : setProfileOpen(true))}>
              <Icon d="M12 15a3 3 0 1 0 0-6 3 3 0 0 0 0 6Zm7.4-3a7.4 7.4 0 0 0-.1-1.2l2-1.6-2-3.4-2.4 1a7 7 0 0 0-2-1.2L14.5 3h-4l-.4 2.6a7 7 0 0 0-2 1.2l-2.4-1-2 3.4 2 1.6a7.4 7.4 0 0 0 0 2.4l-2 1.6 2 3.4 2.4-1a7 7 0 0 0 2 1.2l.4 2.6h4l.4-2.6a7 7 0 0 0 2-1.2l2.4 1 2-3.4-2-1.6c.1-.4.1-.8.1-1.2Z" />
              Manage account
            </button>
            <button type="button" role="menuitem" className="gh-menu-item" onClick={() => void client.signOut().then(() => go(props.afterSignOutUrl))}>
              <Icon d="M15 17l5-5-5-5M20 12H9M12 21H5a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2h7" />
              Sign out
            </button>
          </div>
        ) : null}
      </div>
      {profileOpen ? <Dialog label="Manage account" onClose={() => setProfileOpen(false)}><UserProfile /></Dialog> : null}
    </Root>
  );
}

export function Icon({ d }: { d: string }) {
  return (
    <svg width="16" height="16" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
      <path d={d} />
    </svg>
  );
}

/** A modal dialog on the native <dialog> element: focus is trapped, Escape closes it. */
export function Dialog(props: { label: string; onClose: () => void; children: React.ReactNode }) {
  return (
    <dialog
      ref={(el) => {
        if (el && !el.open) el.showModal();
      }}
      aria-label={props.label}
      onClose={props.onClose}
      onClick={(e) => e.target === e.currentTarget && props.onClose()}
      style={{ border: 0, padding: 0, background: 'transparent', maxWidth: 'min(760px, 95vw)', width: '100%' }}
    >
      {props.children}
    </dialog>
  );
}
