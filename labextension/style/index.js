import '../../lightscientist_jupyter/jupyter/dashboard/style/theme.css';
import './base.css';
