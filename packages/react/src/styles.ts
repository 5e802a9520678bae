/** The components' stylesheet: every colour, the radius and the font are CSS variables (see README). */
export const STYLES = `
.gh-root{--gh-color-primary:#4f46e5;--gh-color-primary-text:#fff;--gh-color-background:#fff;--gh-color-surface:#f8fafc;--gh-color-text:#0f172a;--gh-color-muted:#64748b;--gh-color-border:#e2e8f0;--gh-color-danger:#dc2626;--gh-color-success:#16a34a;--gh-radius:10px;--gh-font-family:ui-sans-serif,system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;--gh-shadow:0 1px 2px rgba(15,23,42,.06),0 12px 32px -8px rgba(15,23,42,.18);
font-family:var(--gh-font-family);color:var(--gh-color-text);font-size:14px;line-height:1.45;-webkit-font-smoothing:antialiased;box-sizing:border-box;max-width:100%}
.gh-root[data-theme=dark]{--gh-color-primary:#818cf8;--gh-color-primary-text:#0b1020;--gh-color-background:#0f172a;--gh-color-surface:#1e293b;--gh-color-text:#e2e8f0;--gh-color-muted:#94a3b8;--gh-color-border:#334155;--gh-color-danger:#f87171;--gh-color-success:#4ade80;--gh-shadow:0 1px 2px rgba(0,0,0,.3),0 16px 40px -8px rgba(0,0,0,.6)}
@media (prefers-color-scheme:dark){.gh-root[data-theme=auto]{--gh-color-primary:#818cf8;--gh-color-primary-text:#0b1020;--gh-color-background:#0f172a;--gh-color-surface:#1e293b;--gh-color-text:#e2e8f0;--gh-color-muted:#94a3b8;--gh-color-border:#334155;--gh-color-danger:#f87171;--gh-color-success:#4ade80}}
.gh-root *,.gh-root *::before,.gh-root *::after{box-sizing:inherit}
.gh-root [hidden]{display:none!important}
.gh-card{background:var(--gh-color-background);border:1px solid var(--gh-color-border);border-radius:calc(var(--gh-radius) * 1.4);box-shadow:var(--gh-shadow);padding:32px;width:400px;max-width:100%}
.gh-card.gh-wide{width:720px;max-width:100%;padding:0;display:flex;overflow:hidden}
.gh-header{text-align:center;margin-bottom:24px}
.gh-logo{height:40px;width:auto;margin:0 auto 16px;display:block}
.gh-title{font-size:20px;font-weight:650;margin:0 0 4px;letter-spacing:-.01em}
.gh-subtitle{color:var(--gh-color-muted);margin:0}
.gh-form{display:flex;flex-direction:column;gap:16px}
.gh-field{display:flex;flex-direction:column;gap:6px}
.gh-label{font-weight:550;font-size:13px}
.gh-input{font:inherit;color:inherit;background:var(--gh-color-background);border:1px solid var(--gh-color-border);border-radius:var(--gh-radius);padding:9px 12px;outline:none;transition:border-color .15s,box-shadow .15s;width:100%}
.gh-input:focus{border-color:var(--gh-color-primary);box-shadow:0 0 0 3px color-mix(in srgb,var(--gh-color-primary) 25%,transparent)}
.gh-input[aria-invalid=true]{border-color:var(--gh-color-danger)}
.gh-field-error,.gh-form-error{color:var(--gh-color-danger);font-size:13px;margin:0}
.gh-field-error:empty{margin-top:-6px}
.gh-form .gh-form-error:empty{margin-top:-16px}
.gh-form-error:not(:empty){background:color-mix(in srgb,var(--gh-color-danger) 10%,transparent);border-radius:var(--gh-radius);padding:8px 12px}
.gh-notice{background:color-mix(in srgb,var(--gh-color-primary) 10%,transparent);border-radius:var(--gh-radius);padding:10px 12px;margin:0}
.gh-button{font:inherit;font-weight:600;cursor:pointer;white-space:nowrap;border-radius:var(--gh-radius);padding:10px 14px;border:1px solid transparent;background:var(--gh-color-primary);color:var(--gh-color-primary-text);transition:filter .15s,background .15s;display:inline-flex;align-items:center;justify-content:center;gap:8px}
.gh-button:hover{filter:brightness(1.08)}
.gh-button:focus-visible,.gh-link:focus-visible,.gh-menu-item:focus-visible,.gh-tab:focus-visible,.gh-trigger:focus-visible{outline:2px solid var(--gh-color-primary);outline-offset:2px}
.gh-button:disabled{opacity:.6;cursor:default}
.gh-button.gh-secondary{background:var(--gh-color-background);color:var(--gh-color-text);border-color:var(--gh-color-border)}
.gh-button.gh-secondary:hover{background:var(--gh-color-surface);filter:none}
.gh-button.gh-provider{display:flex;align-items:center;justify-content:center;gap:8px}
.gh-provider-icon{flex:none;color:var(--gh-color-muted)}
.gh-button.gh-danger{background:transparent;color:var(--gh-color-danger);border-color:color-mix(in srgb,var(--gh-color-danger) 40%,transparent)}
.gh-button.gh-small{padding:6px 10px;font-size:13px}
.gh-divider{display:flex;align-items:center;gap:12px;color:var(--gh-color-muted);font-size:12px;text-transform:uppercase;letter-spacing:.05em}
.gh-divider::before,.gh-divider::after{content:"";flex:1;height:1px;background:var(--gh-color-border)}
.gh-alternatives{display:flex;flex-direction:column;gap:8px}
.gh-footer{text-align:center;color:var(--gh-color-muted);margin:20px 0 0}
.gh-link{color:var(--gh-color-primary);font:inherit;font-weight:550;background:none;border:0;padding:0;cursor:pointer;text-decoration:none}
.gh-link:hover{text-decoration:underline}
.gh-links{display:flex;justify-content:space-between;gap:12px;font-size:13px;white-space:nowrap}
.gh-avatar{border-radius:50%;background:var(--gh-color-primary);color:var(--gh-color-primary-text);display:inline-flex;align-items:center;justify-content:center;font-weight:650;overflow:hidden;flex:none;object-fit:cover}
.gh-avatar.gh-square{border-radius:calc(var(--gh-radius) * .7)}
.gh-popover-anchor{position:relative;display:inline-block}
.gh-trigger{font:inherit;color:inherit;background:none;border:1px solid transparent;border-radius:var(--gh-radius);padding:4px;cursor:pointer;display:inline-flex;align-items:center;gap:8px}
.gh-trigger:hover{background:var(--gh-color-surface);border-color:var(--gh-color-border)}
.gh-trigger.gh-org{padding:6px 10px;min-width:200px;justify-content:space-between}
.gh-menu{position:absolute;top:calc(100% + 6px);z-index:50;background:var(--gh-color-background);border:1px solid var(--gh-color-border);border-radius:calc(var(--gh-radius) * 1.2);box-shadow:var(--gh-shadow);padding:6px;min-width:260px}
.gh-menu.gh-end{right:0}.gh-menu.gh-start{left:0}
.gh-menu-header{display:flex;gap:10px;align-items:center;padding:10px;border-bottom:1px solid var(--gh-color-border);margin-bottom:6px}
.gh-menu-item{font:inherit;color:inherit;width:100%;text-align:left;background:none;border:0;border-radius:calc(var(--gh-radius) * .7);padding:8px 10px;cursor:pointer;display:flex;align-items:center;gap:10px}
.gh-menu-item:hover,.gh-menu-item:focus{background:var(--gh-color-surface);outline:none}
.gh-menu-item[aria-checked=true]{font-weight:600}
.gh-menu-row{display:flex;align-items:center;gap:10px;padding:6px 10px}
.gh-menu-label{color:var(--gh-color-muted);font-size:12px;padding:6px 10px 2px}
.gh-name{font-weight:600}.gh-muted{color:var(--gh-color-muted);font-size:13px}
.gh-ellipsis{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.gh-nav{width:200px;flex:none;background:var(--gh-color-surface);border-right:1px solid var(--gh-color-border);padding:20px 12px;display:flex;flex-direction:column;gap:4px}
.gh-nav-title{font-weight:650;padding:0 10px 12px}
.gh-tab{font:inherit;color:var(--gh-color-muted);text-align:left;background:none;border:0;border-radius:calc(var(--gh-radius) * .7);padding:8px 10px;cursor:pointer}
.gh-tab[aria-selected=true]{background:var(--gh-color-background);color:var(--gh-color-text);font-weight:600;box-shadow:0 1px 2px rgba(15,23,42,.08)}
.gh-panel{flex:1;padding:28px 32px;min-width:0}
.gh-section{border-bottom:1px solid var(--gh-color-border);padding:0 0 20px;margin:0 0 20px}
.gh-section:last-child{border-bottom:0;margin-bottom:0}
.gh-section-title{font-size:15px;font-weight:650;margin:0 0 14px}
.gh-row{display:flex;gap:12px;align-items:center}
.gh-grid2{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.gh-list{list-style:none;margin:0;padding:0;display:flex;flex-direction:column}
.gh-list li{display:flex;align-items:center;gap:12px;padding:10px 0;border-bottom:1px solid var(--gh-color-border)}
.gh-list li:last-child{border-bottom:0}
.gh-badge{font-size:12px;font-weight:600;border-radius:999px;padding:2px 8px;background:var(--gh-color-surface);border:1px solid var(--gh-color-border);color:var(--gh-color-muted)}
.gh-select{font:inherit;color:inherit;background:var(--gh-color-background);border:1px solid var(--gh-color-border);border-radius:var(--gh-radius);padding:6px 8px}
.gh-success{color:var(--gh-color-success);font-size:13px;margin:0}
.gh-visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.gh-spinner{width:16px;height:16px;border:2px solid currentColor;border-right-color:transparent;border-radius:50%;animation:gh-spin .7s linear infinite}
/* Two-step verification, backup codes, API keys */
.gh-box{border:1px solid var(--gh-color-border);border-radius:var(--gh-radius);background:var(--gh-color-surface);padding:16px;display:flex;flex-direction:column;gap:14px;margin-top:12px}
.gh-box:first-child{margin-top:0}
.gh-qr{display:block;flex:none;border-radius:8px;border:1px solid var(--gh-color-border)}
.gh-code{display:block;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px;background:var(--gh-color-background);border:1px solid var(--gh-color-border);border-radius:calc(var(--gh-radius) * .7);padding:8px 10px;overflow-wrap:anywhere;margin-top:6px;user-select:all}
.gh-codes{list-style:none;margin:0;padding:12px 16px;display:grid;grid-template-columns:repeat(2,1fr);gap:6px 24px;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:14px;letter-spacing:.04em;background:var(--gh-color-background);border:1px solid var(--gh-color-border);border-radius:calc(var(--gh-radius) * .7)}
.gh-name .gh-badge{margin-left:4px;vertical-align:1px}
.gh-badge.gh-on{color:var(--gh-color-success);border-color:color-mix(in srgb,var(--gh-color-success) 40%,transparent)}
.gh-switch{flex:none;width:40px;height:24px;border-radius:999px;border:1px solid var(--gh-color-border);background:var(--gh-color-border);padding:2px;cursor:pointer;transition:background .15s}
.gh-switch span{display:block;width:18px;height:18px;border-radius:50%;background:#fff;box-shadow:0 1px 2px rgba(0,0,0,.25);transition:transform .15s}
.gh-switch[aria-checked=true]{background:var(--gh-color-primary);border-color:var(--gh-color-primary)}
.gh-switch[aria-checked=true] span{transform:translateX(16px)}
.gh-switch:focus-visible{outline:2px solid var(--gh-color-primary);outline-offset:2px}
.gh-switch:disabled{opacity:.6;cursor:default}
@keyframes gh-spin{to{transform:rotate(360deg)}}
.gh-qr-box{display:flex;justify-content:center}
.gh-qr{display:block;border-radius:var(--gh-radius);border:1px solid var(--gh-color-border)}
.gh-secret{display:block;text-align:center;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:13px;letter-spacing:.04em;word-break:break-all;background:var(--gh-color-surface);border-radius:var(--gh-radius);padding:8px 10px;user-select:all}
.gh-codes{display:grid;grid-template-columns:1fr 1fr;gap:6px 16px;list-style:none;margin:0;padding:12px;background:var(--gh-color-surface);border-radius:var(--gh-radius);font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:14px;text-align:center}
.gh-codes code{font:inherit}
.gh-impersonation{position:fixed;top:0;left:0;right:0;z-index:2147483000;display:flex;gap:12px;align-items:center;justify-content:center;flex-wrap:wrap;padding:8px 16px;background:#f59e0b;color:#1c1917;font-weight:500;max-width:none;box-shadow:0 2px 8px rgba(0,0,0,.2)}
.gh-root.gh-impersonation[data-theme=dark]{background:#b45309;color:#fff7ed}
@media (prefers-color-scheme:dark){.gh-root.gh-impersonation[data-theme=auto]{background:#b45309;color:#fff7ed}}
.gh-impersonation-signout{font:inherit;font-weight:600;padding:4px 12px;border-radius:999px;border:1px solid currentColor;background:transparent;color:inherit;cursor:pointer}
.gh-impersonation-signout:hover{background:rgba(0,0,0,.08)}
`;
