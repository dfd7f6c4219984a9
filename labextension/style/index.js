import '../../lightscientist_jupyter/jupyter/dashboard/static/theme.css';
import './base.css';
import './handoff.css';
