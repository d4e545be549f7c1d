pub mod obbtree;
