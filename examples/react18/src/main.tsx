// The react-express example's page, unchanged; the page says which React renders it.
import { version } from 'react';
import '../../react-express/src/main.tsx';

document.documentElement.dataset.react = version;
