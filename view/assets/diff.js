// diff.js
