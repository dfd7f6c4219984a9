import '../../lightscientist_jupyter/jupyter/static/theme.css';
import './base.css';
import './handoff.css';
