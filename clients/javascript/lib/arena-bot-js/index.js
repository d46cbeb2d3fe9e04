'use strict';
// The JavaScript SDK under its package name: a bot the arena launches finds it with
// require('arena-bot-js') (the arena puts this folder's parent on NODE_PATH), as a submitted bundle does.
module.exports = require('../../sdk.js');
