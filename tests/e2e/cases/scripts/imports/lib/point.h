struct point {
  long x;
  long y;
};
